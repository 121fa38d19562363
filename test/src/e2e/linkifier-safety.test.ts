/**
 * Linkifier safety (issue 13): a pattern too long for the regex engine is refused before it is
 * compiled, templates naming a script-capable scheme are refused at creation, and a URL whose
 * scheme comes from the matched text is dropped at render, from topic_links as from content.
 */
import t from 'tap';
import { startSystem } from '../harness.js';

t.test('linkifiers cannot produce unsafe URLs or exhaust the engine', async (t) => {
  const sys = await startSystem(t);
  const admin = sys.client(sys.people.iago);
  const hamlet = sys.client(sys.people.hamlet);

  t.test('a 100,000-character pattern is refused, and the next linkifier is fine', async (t) => {
    const r = await admin.post('/realm/filters', { pattern: `(?P<id>${'a'.repeat(100_000)})`, url_template: 'https://x.example/{id}' });
    t.equal(r.status, 400);
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Ensure this value has at most 1000 characters (it has 100008).' });
    const template = await admin.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: `https://x.example/${'p'.repeat(1100)}/{id}` });
    t.equal(template.status, 400);
    t.match(template.body, { msg: /^Ensure this value has at most 1024 characters/ });
    const ok = await admin.post('/realm/filters', { pattern: 'T(?P<id>[0-9]+)', url_template: 'https://tickets.example/{id}' });
    t.equal(ok.status, 200);
  });

  t.test('templates with a javascript:, data: or vbscript: scheme are refused', async (t) => {
    for (const url_template of ['javascript:alert({id})', 'JavaScript:alert({id})', 'data:text/html,{id}', 'vbscript:msgbox({id})', ' javascript:{id}']) {
      const r = await admin.post('/realm/filters', { pattern: 'X(?P<id>[0-9]+)', url_template });
      t.equal(r.status, 400, url_template);
      t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid URL template.' });
    }
  });

  t.test('a scheme taken from the topic is dropped from topic_links', async (t) => {
    const created = await admin.post('/realm/filters', { pattern: 'go:(?P<url>\\S+)', url_template: '{+url}' });
    t.equal(created.status, 200);
    await hamlet.post('/users/me/subscriptions', { subscriptions: [{ name: 'links' }] });
    const send = async (topic: string) => {
      const id = (await hamlet.post('/messages', { type: 'stream', to: 'links', topic, content: 'x' })).body.id as number;
      return (await hamlet.get(`/messages/${id}`)).body.message as { topic_links: Array<{ url: string }> };
    };
    for (const topic of ['go:javascript:alert(1)', 'go:data:text/html,x', 'go:vbscript:x']) {
      t.same((await send(topic)).topic_links, [], topic);
    }
    t.same((await send('go:https://safe.example/a')).topic_links.map((l) => l.url), ['https://safe.example/a'], 'a safe URL stays');
  });
});

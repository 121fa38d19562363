import t from 'tap';
import { startSystem } from '../harness.js';

t.test('linkifiers and alert words', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'gateway'] });
  const { desdemona, hamlet } = sys.people;
  const admin = sys.client(desdemona);

  t.test('administrators create, list, update, reorder and delete linkifiers', async (t) => {
    const created = await admin.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' });
    t.equal(created.status, 200);
    t.type(created.body.id, 'number');
    const legacy = await admin.post('/realm/filters', { pattern: 'ZC-(?P<num>\\d+)', url_format_string: 'https://tracker.example/%(num)s' });
    t.equal(legacy.status, 200, 'the legacy url_format_string is accepted');
    const list = await sys.client(hamlet).get('/realm/linkifiers');
    t.same(list.body.linkifiers, [
      { id: created.body.id, pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' },
      { id: legacy.body.id, pattern: 'ZC-(?P<num>\\d+)', url_template: 'https://tracker.example/{num}' },
    ]);
    const old = await sys.client(hamlet).get('/realm/filters');
    t.same(old.body.filters, [
      ['#(?P<id>[0-9]+)', 'https://github.com/zulip/zulip/issues/%(id)s', created.body.id],
      ['ZC-(?P<num>\\d+)', 'https://tracker.example/%(num)s', legacy.body.id],
    ]);
    const upd = await admin.patch(`/realm/filters/${created.body.id}`, { pattern: '#(?P<id>[0-9]{1,8})', url_template: 'https://example.com/{id}' });
    t.equal(upd.status, 200);
    const reorder = await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [legacy.body.id, created.body.id] });
    t.equal(reorder.status, 200);
    const after = await admin.get('/realm/linkifiers');
    t.same((after.body.linkifiers as Array<{ id: number }>).map((l) => l.id), [legacy.body.id, created.body.id]);
    const del = await admin.delete(`/realm/filters/${legacy.body.id}`);
    t.equal(del.status, 200);
    const gone = await admin.delete(`/realm/filters/${legacy.body.id}`);
    t.equal(gone.status, 400);
    t.match(gone.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Linkifier not found.' });
  });

  t.test('linkifier errors', async (t) => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ pattern: '(?P<id>[0-9]+', url_template: 'https://x/{id}' }, 'Bad regular expression: missing ): (?P<id>[0-9]+'],
      [{ pattern: '(?P<id>a)\\1', url_template: 'https://x/{id}' }, 'Bad regular expression: invalid escape sequence: \\1'],
      [{ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x/{id' }, 'Invalid URL template.'],
      [{ pattern: '#(?P<id>[0-9]+)', url_template: 'https://x/{id}/{other}' }, "Group 'other' in URL template is not present in linkifier pattern."],
      [{ pattern: '#(?P<id>[0-9]+)-(?P<x>\\w)', url_template: 'https://x/{id}' }, "Group 'x' in linkifier pattern is not present in URL template."],
    ];
    for (const [p, msg] of cases) {
      const r = await admin.post('/realm/filters', p);
      t.equal(r.status, 400, msg);
      t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
    }
    const missing = await admin.post('/realm/filters', { pattern: 'x' });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', var_name: 'url_template' });
    const dup1 = await admin.post('/realm/filters', { pattern: 'DUP(?P<a>\\d)', url_template: 'https://x/{a}' });
    t.equal(dup1.status, 200);
    const dup2 = await admin.post('/realm/filters', { pattern: 'DUP(?P<a>\\d)', url_template: 'https://y/{a}' });
    t.equal(dup2.status, 400);
    t.match(dup2.body, { msg: /already exists/ });
    const member = await sys.client(hamlet).post('/realm/filters', { pattern: 'M(?P<a>\\d)', url_template: 'https://x/{a}' });
    t.equal(member.status, 400);
    t.match(member.body, { msg: 'Must be an organization administrator' });
    const notFound = await admin.patch('/realm/filters/999999', { pattern: 'Q(?P<a>\\d)', url_template: 'https://x/{a}' });
    t.match(notFound.body, { msg: 'Linkifier not found.' });
    const badId = await admin.delete('/realm/filters/abc');
    t.equal(badId.status, 400);
    const badOrder = await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: [1] });
    t.equal(badOrder.status, 400);
  });

  t.test('alert words are per user and case-insensitive', async (t) => {
    const me = sys.client(hamlet);
    t.same((await me.get('/users/me/alert_words')).body.alert_words, []);
    const added = await me.post('/users/me/alert_words', { alert_words: ['Denmark', 'poison', 'denmark'] });
    t.same(added.body.alert_words, ['Denmark', 'poison']);
    const removed = await me.delete('/users/me/alert_words', { alert_words: ['DENMARK', 'absent'] });
    t.same(removed.body.alert_words, ['poison']);
    t.same((await sys.client(desdemona).get('/users/me/alert_words')).body.alert_words, [], 'other users are unaffected');
    const long = await me.post('/users/me/alert_words', { alert_words: ['x'.repeat(101)] });
    t.equal(long.status, 400);
    t.match(long.body, { msg: 'alert_words[0] is too long (limit: 100 characters)' });
    const notList = await me.post('/users/me/alert_words', { alert_words: 'word' });
    t.equal(notList.status, 400);
  });
});

/**
 * Message rendering through the API with @zc/markdown (issue 5): real HTML for the dialect,
 * XSS attempts sent through POST /messages, linkifiers from POST /realm/filters in content
 * and topic_links, the has: narrows, and the flags content gives each recipient (mentions,
 * silent mentions, wildcards, @**topic**, alert words per recipient). Streams are set up
 * through the real POST /users/me/subscriptions.
 */
import t from 'tap';
import { startSystem, type Account, type System } from '../harness.js';
import { messagesWorld, type MessagesWorld, type Msg } from './messages-fixtures.js';

/** Subscribes `people` to a (new) public stream through the API and waits for the messages read model. */
async function streamWith(sys: System, w: MessagesWorld, name: string, people: Account[]): Promise<number> {
  const [first] = people;
  const r = await sys.client(first as Account).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: people.map((p) => p.user_id) });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  const id = (await sys.client(first as Account).get('/get_stream_id', { stream: name })).body.stream_id as number;
  await sys.flushOutboxes();
  for (const p of people) await w.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [id, p.user_id]);
  return id;
}

/** Every way the HTML could run script or load a foreign scheme: empty when it is clean. */
function unsafeMarkup(html: string): string[] {
  const problems: string[] = [];
  if (/<script/i.test(html)) problems.push('script tag');
  if (/<(iframe|object|embed|svg|style|form|input)\b/i.test(html)) problems.push('active element');
  for (const tag of html.match(/<[a-z][^>]*>/gi) ?? []) {
    if (/\son[a-z]+\s*=/i.test(tag)) problems.push(`event handler in ${tag}`);
    for (const m of tag.matchAll(/\b(href|src)="([^"]*)"/gi)) {
      const target = (m[2] as string).replace(/&#?\w+;/g, '').trim().toLowerCase();
      if (!/^(https?:|mailto:|\/|#)/.test(target)) problems.push(`${m[1]}=${m[2]}`);
    }
  }
  return problems;
}

t.test('messages: markdown rendering, linkifiers and content flags', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  const verona = await streamWith(sys, w, 'Verona', [hamlet, othello, iago, desdemona]);

  const send = async (who: Account, params: Record<string, unknown>) => {
    const r = await sys.client(who).post('/messages', params as never);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const fetchAs = async (who: Account, id: number, extra: Record<string, unknown> = {}) => {
    const r = await sys.client(who).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['id', String(id)]], ...extra } as never);
    return (r.body.messages as Msg[])[0];
  };
  const flagsOf = async (who: Account, id: number) => (await fetchAs(who, id))?.flags as string[] | undefined;

  t.test('the dialect renders to Zulip HTML, in history and in the message event', async (t) => {
    const source = [
      '**bold** *em* ~~strike~~ `code` :smile:',
      '',
      '```python',
      'x = 1',
      '```',
      '',
      '> quoted',
      '',
      '* one',
      '* two',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
    ].join('\n');
    const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'dialect', content: source });
    const m = await fetchAs(othello, id);
    t.match(m?.content, '<p><strong>bold</strong> <em>em</em> <del>strike</del> <code>code</code> <span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span></p>');
    t.match(m?.content, '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>');
    t.match(m?.content, '<blockquote>\n<p>quoted</p>\n</blockquote>');
    t.match(m?.content, '<ul>\n<li>one</li>\n<li>two</li>\n</ul>');
    t.match(m?.content, '<table>\n<thead>\n<tr>\n<th>a</th>');
    t.equal((await fetchAs(othello, id, { apply_markdown: false }))?.content, source, 'apply_markdown=false gives the source back');
    const one = await sys.client(othello).get(`/messages/${id}`);
    t.equal(one.body.raw_content, source);
    t.equal((one.body.message as Msg).content, m?.content);
    const [event] = (await w.notifications()).filter((n) => n.event.type === 'message' && n.event.message.id === id);
    t.equal(event?.event.message.content, m?.content, 'the message event carries the same HTML');
    t.same(event?.event.message.topic_links, []);
  });

  t.test('mentions and channel links render with ids', async (t) => {
    const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'links', content: `hi @**Othello, the Moor of Venice** and @_**Iago|${iago.user_id}**, see #**Verona**` });
    const m = await fetchAs(othello, id);
    t.match(m?.content, `<span class="user-mention" data-user-id="${othello.user_id}">@Othello, the Moor of Venice</span>`);
    t.match(m?.content, `<span class="user-mention silent" data-user-id="${iago.user_id}">Iago</span>`);
    t.match(m?.content, `data-stream-id="${verona}"`);
  });

  t.test('XSS attempts through POST /messages never reach content', async (t) => {
    const attacks = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="javascript:alert(1)">click</a>',
      '[click](javascript:alert(1))',
      '[click](JaVaScRiPt:alert(1))',
      '[click](  javascript:alert(1))',
      '[click](vbscript:msgbox(1))',
      '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
      '![pic](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)',
      '![pic](javascript:alert(1))',
      '[a](https://example.com/" onmouseover="alert(1))',
      'https://example.com/"><script>alert(1)</script>',
      "https://example.com/' onmouseover='alert(1)",
      '<svg onload=alert(1)>',
      '<iframe src="https://evil.example"></iframe>',
      '`<b onclick=alert(1)>`',
      '```\n</code></pre><script>alert(1)</script>\n```',
      '@**<img src=x onerror=alert(1)>**',
      '#**<script>alert(1)</script>**',
      '$$\\href{javascript:alert(1)}{x}$$',
      '<time:"><script>alert(1)</script>>',
      '[x](https://example.com/a)"onmouseover="alert(1)',
    ];
    for (const content of attacks) {
      const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'xss', content });
      const html = (await fetchAs(othello, id))?.content as string;
      t.same(unsafeMarkup(html), [], `${content} → ${html}`);
    }
  });

  t.test('has:link, has:image and has:attachment come from the renderer', async (t) => {
    const link = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'has', content: 'see https://example.com/page' });
    const image = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'has', content: 'look https://example.com/cat.png' });
    const attachment = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'has', content: 'the [report](/user_uploads/2/ab/cd/report.pdf)' });
    const plain = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'has', content: 'nothing here but `https://example.com/code`' });
    const ids = async (operand: string) =>
      ((await sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [['topic', 'has'], ['has', operand]] } as never)).body.messages as Msg[]).map((m) => m.id);
    t.same(await ids('link'), [link, image, attachment]);
    t.same(await ids('image'), [image]);
    t.same(await ids('attachment'), [attachment]);
    t.notOk((await ids('link')).includes(plain), 'a URL inside code is not a link');
  });

  t.test('linkifiers from POST /realm/filters apply to content and topic_links, in the realm order', async (t) => {
    const admin = sys.client(desdemona);
    const first = await admin.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example/issues/{id}' });
    t.equal(first.status, 200);
    const second = await admin.post('/realm/filters', { pattern: 'ZC-(?P<num>[0-9]+)', url_template: 'https://zc.example/{num}' });
    t.equal(second.status, 200);
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.realm_linkifiers WHERE linkifiers::text LIKE '%ZC-%'", []);
    const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'fix #42 and ZC-7', content: 'fixes #42, see ZC-7' });
    const m = await fetchAs(othello, id);
    t.match(m?.content, '<a href="https://tracker.example/issues/42">#42</a>');
    t.match(m?.content, '<a href="https://zc.example/7">ZC-7</a>');
    t.same(m?.topic_links, [
      { text: '#42', url: 'https://tracker.example/issues/42' },
      { text: 'ZC-7', url: 'https://zc.example/7' },
    ]);
    const [event] = (await w.notifications()).filter((n) => n.event.type === 'message' && n.event.message.id === id);
    t.same(event?.event.message.topic_links, m?.topic_links, 'the message event has the same topic_links');
    const dm = await send(hamlet, { type: 'private', to: JSON.stringify([othello.user_id]), content: 'dm about #42' });
    t.same((await fetchAs(othello, dm))?.topic_links, [], 'direct messages have no topic links');

    // An overlapping pattern added later loses to the earlier one; reordering makes it win.
    const overlap = await admin.post('/realm/filters', { pattern: 'fix #(?P<id>[0-9]+)', url_template: 'https://other.example/{id}' });
    t.equal(overlap.status, 200);
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.realm_linkifiers WHERE linkifiers::text LIKE '%other.example%'", []);
    t.same((await fetchAs(othello, id))?.topic_links?.[0], { text: '#42', url: 'https://tracker.example/issues/42' });
    const order = await admin.patch('/realm/linkifiers', { ordered_linkifier_ids: JSON.stringify([overlap.body.id, first.body.id, second.body.id]) });
    t.equal(order.status, 200);
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.realm_linkifiers WHERE linkifiers->0->>'url_template' LIKE '%other.example%'", []);
    t.same((await fetchAs(othello, id))?.topic_links?.[0], { text: 'fix #42', url: 'https://other.example/42' }, 'topic_links follow the current order when fetched');
    for (const l of [first, second, overlap]) await admin.delete(`/realm/filters/${l.body.id}`);
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.realm_linkifiers WHERE linkifiers = '[]'::jsonb", []);
  });

  t.test('mention flags: mentioned, unmentioned, silent, wildcards, @topic', async (t) => {
    const direct = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: 'hey @**Othello, the Moor of Venice**' });
    t.same(await flagsOf(othello, direct), ['mentioned']);
    t.same(await flagsOf(iago, direct), [], 'an unmentioned subscriber gets no flag');
    const byId = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: `hey @**|${iago.user_id}**` });
    t.same(await flagsOf(iago, byId), ['mentioned']);
    const silent = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: 'hey @_**Othello, the Moor of Venice**' });
    t.same(await flagsOf(othello, silent), [], 'a silent mention sets no flag');
    for (const wildcard of ['all', 'everyone', 'stream', 'channel']) {
      const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: `@**${wildcard}** news` });
      t.same(await flagsOf(othello, id), ['wildcard_mentioned'], `@**${wildcard}**`);
      t.same(await flagsOf(iago, id), ['wildcard_mentioned']);
    }
    const silentAll = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: '@_**all** news' });
    t.same(await flagsOf(othello, silentAll), []);
    const quoted = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'flags', content: '> @**Othello, the Moor of Venice** said' });
    t.same(await flagsOf(othello, quoted), [], 'a mention inside a quote is silenced');

    // @topic: only people who posted in the topic (and the sender).
    await send(othello, { type: 'stream', to: 'Verona', topic: 'party', content: 'I was here' });
    const topic = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'party', content: '@**topic** cake' });
    t.same(await flagsOf(othello, topic), ['wildcard_mentioned'], 'a participant');
    t.same(await flagsOf(iago, topic), [], 'not a participant');
    t.same(await flagsOf(hamlet, topic), ['wildcard_mentioned'], 'the sender is a participant');
    const events = (await w.notifications()).filter((n) => n.event.type === 'message' && n.event.message.id === topic);
    t.same(events[0]?.users.find((u: Msg) => u.id === othello.user_id), { id: othello.user_id, flags: ['wildcard_mentioned'] }, 'the event carries the flags');
  });

  t.test('mentioning someone who does not receive the message does not send it to them', async (t) => {
    const id = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'outsider', content: 'hi @**Polonius**' });
    const r = await sys.client(polonius).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['id', String(id)]] });
    t.same(r.body.messages, [], 'the guest, not subscribed, cannot see it');
    const [event] = (await w.notifications()).filter((n) => n.event.type === 'message' && n.event.message.id === id);
    t.notOk(event?.users.some((u: number | Msg) => (typeof u === 'number' ? u : u.id) === polonius.user_id), 'and is not among the recipients');
    t.match((await fetchAs(othello, id))?.content, `data-user-id="${polonius.user_id}"`, 'the mention still renders');
    const dm = await send(hamlet, { type: 'private', to: JSON.stringify([othello.user_id]), content: 'tell @**Iago**' });
    t.same(await flagsOf(othello, dm), [], 'the DM recipient is not mentioned');
    t.same((await sys.client(iago).get(`/messages/${dm}`)).body.code, 'BAD_REQUEST', 'Iago cannot read the DM');
  });

  t.test('alert words flag only the recipients whose words occur, whole words, any case', async (t) => {
    const added = await sys.client(othello).post('/users/me/alert_words', { alert_words: JSON.stringify(['Castle', 'poison']) });
    t.equal(added.status, 200);
    const iagos = await sys.client(iago).post('/users/me/alert_words', { alert_words: JSON.stringify(['moat']) });
    t.equal(iagos.status, 200);
    await sys.flushOutboxes();
    await w.until('SELECT 1 FROM messages.alert_words WHERE user_id = $1', [iago.user_id]);
    await w.until('SELECT 1 FROM messages.alert_words WHERE user_id = $1', [othello.user_id]);
    const castle = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'alerts', content: 'The CASTLE is cold.' });
    t.same(await flagsOf(othello, castle), ['has_alert_word']);
    t.same(await flagsOf(iago, castle), [], "not Iago's word");
    t.same(await flagsOf(desdemona, castle), []);
    const both = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'alerts', content: 'poison in the moat' });
    t.same(await flagsOf(othello, both), ['has_alert_word']);
    t.same(await flagsOf(iago, both), ['has_alert_word']);
    const partial = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'alerts', content: 'sandcastles and poisonous moats' });
    t.same(await flagsOf(othello, partial), [], 'only whole words');
    t.same(await flagsOf(iago, partial), []);
    const mixed = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'alerts', content: '@**Othello, the Moor of Venice** the castle!' });
    t.same(await flagsOf(othello, mixed), ['mentioned', 'has_alert_word']);
    await sys.client(othello).delete('/users/me/alert_words', { alert_words: JSON.stringify(['Castle', 'poison']) });
    await sys.flushOutboxes();
    await w.until("SELECT 1 FROM messages.alert_words WHERE user_id = $1 AND words = '{}'", [othello.user_id]);
    const after = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'alerts', content: 'the castle again' });
    t.same(await flagsOf(othello, after), [], 'removed words no longer flag');
  });

  t.test("translate_emoticons: the sender's setting, counted from the moment PATCH /settings answers", async (t) => {
    const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';
    const h = sys.client(hamlet);
    const plain = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'emoticons', content: 'Translate this :).' });
    t.equal((await fetchAs(othello, plain))?.content, '<p>Translate this :).</p>', "off by default (Zulip's default)");
    t.equal((await h.patch('/settings', { translate_emoticons: true })).status, 200);
    // No wait: the very next send renders with the new value.
    const translated = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'emoticons', content: 'Translate this :). `:)` <3 a:)' });
    t.equal(
      (await fetchAs(othello, translated))?.content,
      `<p>Translate this ${smile}. <code>:)</code> <span aria-label="heart" class="emoji emoji-2764" role="img" title="heart">:heart:</span> a:)</p>`,
      'translated, except in code and inside words',
    );
    const dm = await send(hamlet, { type: 'private', to: JSON.stringify([othello.user_id]), content: ':(' });
    t.equal((await fetchAs(othello, dm))?.content, '<p><span aria-label="frown" class="emoji emoji-1f641" role="img" title="frown">:frown:</span></p>', 'direct messages too');
    t.same((await h.post('/messages/render', { content: ':)' })).body, { result: 'success', msg: '', rendered: `<p>${smile}</p>` }, "preview: the actor's setting");
    t.equal((await sys.client(othello).post('/messages/render', { content: ':)' })).body.rendered, '<p>:)</p>', "another user's preview: theirs (off)");
    const theirs = await send(othello, { type: 'stream', to: 'Verona', topic: 'emoticons', content: ':)' });
    t.equal((await fetchAs(hamlet, theirs))?.content, '<p>:)</p>', 'a sender with it off: as typed, whoever reads it');
    // An edit renders with the sender's setting, as Zulip's render_markdown does.
    t.equal((await h.patch(`/messages/${plain}`, { content: 'Edited :)' })).status, 200);
    t.equal((await fetchAs(othello, plain))?.content, `<p>Edited ${smile}</p>`);
    t.equal((await h.patch('/settings', { translate_emoticons: false })).status, 200);
    const offAgain = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'emoticons', content: ':)' });
    t.equal((await fetchAs(othello, offAgain))?.content, '<p>:)</p>', 'off again at once');
  });
});

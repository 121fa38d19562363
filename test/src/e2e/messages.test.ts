/**
 * POST /messages, GET /messages and GET /messages/{id} through the gateway (spec 4.2, 4.9,
 * section 8): every recipient form, every documented error with status, code and msg (and
 * that a failed send stored nothing), limits, idempotency, the message event payload,
 * anchors and the Message object.
 */
import { createHash } from 'node:crypto';
import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { startSystem } from '../harness.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('messages: send and fetch', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius, bot } = sys.people;
  const moderator = await sys.createUser({ email: 'cordelia@zulip.test', full_name: 'Cordelia', role: Role.MODERATOR });
  w.remember(moderator);
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id, iago.user_id, moderator.user_id]);
  await w.createStream('Secret', [hamlet.user_id, othello.user_id], { invite_only: true });
  await w.createStream('Announcements', [hamlet.user_id, iago.user_id, moderator.user_id], { stream_post_policy: 2 });
  await w.createStream('Moderated', [hamlet.user_id, moderator.user_id], { stream_post_policy: 4 });
  await w.createStream('Members', [hamlet.user_id, polonius.user_id], { stream_post_policy: 3 });

  const send = (who = hamlet, params: Record<string, unknown> = {}, o: { userAgent?: string; headers?: Record<string, string> } = {}) =>
    sys.client(who, { userAgent: o.userAgent }).post('/messages', params as never, { headers: o.headers ?? {} });
  const history = async (who = hamlet, params: Record<string, unknown> = {}) => {
    const r = await sys.client(who).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, ...params } as never);
    t.equal(r.status, 200, `history ok: ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.body as unknown as { messages: Msg[]; anchor: number; found_anchor: boolean; found_oldest: boolean; found_newest: boolean; history_limited: boolean };
  };
  const count = async () => (await history(iago, { narrow: [] })).messages.length + (await history(hamlet)).messages.length;

  t.test('stream messages by name, id, JSON and the subject alias', async (t) => {
    const byName = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'castle', content: 'by name' });
    t.equal(byName.status, 200);
    t.match(byName.body, { result: 'success', msg: '' });
    t.type(byName.body.id, 'number');
    const byId = await send(hamlet, { type: 'stream', to: w.id('Denmark'), topic: 'castle', content: 'by id' });
    t.equal(byId.status, 200);
    const byJson = await send(hamlet, { type: 'stream', to: JSON.stringify(['Denmark']), subject: 'castle', content: 'by json list and subject' });
    t.equal(byJson.status, 200);
    const channel = await send(hamlet, { type: 'channel', to: 'denmark', topic: 'castle', content: 'modern type, other case' });
    t.equal(channel.status, 200);
    t.ok((byId.body.id as number) > (byName.body.id as number), 'ids grow');
    const h = await history(othello, { narrow: [{ operator: 'stream', operand: 'Denmark' }] });
    const mine = h.messages.filter((m) => [byName.body.id, byId.body.id, byJson.body.id, channel.body.id].includes(m.id));
    t.equal(mine.length, 4);
    t.same(mine.map((m) => m.subject), ['castle', 'castle', 'castle', 'castle']);
    t.same(mine.map((m) => m.display_recipient), ['Denmark', 'Denmark', 'Denmark', 'Denmark']);
  });

  t.test('the Message object has every field of spec 2.2', async (t) => {
    const r = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'fields', content: 'Hello **there** <b>raw</b> & https://example.com/x' }, { userAgent: 'ZulipMobile/27.1' });
    const [m] = (await history(othello, { narrow: [['topic', 'fields']], client_gravatar: false })).messages as Msg[];
    const hash = createHash('md5').update(hamlet.email.toLowerCase()).digest('hex');
    t.match(m, {
      id: r.body.id,
      type: 'stream',
      content_type: 'text/html',
      subject: 'fields',
      stream_id: w.id('Denmark'),
      display_recipient: 'Denmark',
      sender_id: hamlet.user_id,
      sender_email: hamlet.email,
      sender_full_name: 'King Hamlet',
      sender_realm_str: '',
      avatar_url: `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=1`,
      client: 'ZulipMobile',
      is_me_message: false,
      reactions: [],
      submessages: [],
      topic_links: [],
      flags: [],
    });
    t.type(m?.recipient_id, 'number');
    t.type(m?.timestamp, 'number');
    t.ok(Math.abs((m?.timestamp as number) - Date.now() / 1000) < 60);
    t.equal(m?.content, '<p>Hello <strong>there</strong> &lt;b&gt;raw&lt;/b&gt; &amp; <a href="https://example.com/x">https://example.com/x</a></p>', 'user HTML never reaches the output');
    t.notOk('edit_history' in (m ?? {}), 'never edited: no edit_history');
    t.notOk('match_content' in (m ?? {}), 'no search: no match_content');
    const [sent] = (await history(hamlet, { narrow: [['topic', 'fields']] })).messages;
    t.same(sent?.flags, ['read'], 'a message sent from an interactive client starts read for its sender');
    t.equal(sent?.avatar_url, null, 'client_gravatar (default true) leaves the avatar to the client');
    const raw = (await history(othello, { narrow: [['topic', 'fields']], apply_markdown: false })).messages[0];
    t.equal(raw?.content, 'Hello **there** <b>raw</b> & https://example.com/x');
    t.equal(raw?.content_type, 'text/x-markdown');
  });

  t.test('direct messages by ids, emails, one email and comma-separated emails', async (t) => {
    const forms = [[othello.user_id], [othello.email], othello.email, `${othello.email}, ${hamlet.email}`, JSON.stringify([othello.user_id])];
    const ids: number[] = [];
    for (const to of forms) {
      const r = await send(hamlet, { type: 'private', to, content: `to ${JSON.stringify(to)}` });
      t.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(r.body.id as number);
    }
    const h = await history(othello, { narrow: [{ operator: 'dm', operand: [hamlet.user_id] }] });
    t.same(h.messages.map((m) => m.id).slice(-forms.length), ids, 'all five land in the same conversation');
    const m = h.messages[h.messages.length - 1] as Msg;
    t.equal(m.type, 'private');
    t.equal(m.subject, '');
    t.notOk('stream_id' in m);
    t.same(m.display_recipient, [
      { id: hamlet.user_id, email: hamlet.email, full_name: 'King Hamlet', is_mirror_dummy: false },
      { id: othello.user_id, email: othello.email, full_name: 'Othello, the Moor of Venice', is_mirror_dummy: false },
    ]);
    const direct = await send(hamlet, { type: 'direct', to: [othello.user_id], content: 'modern type' });
    t.equal(direct.status, 200);
  });

  t.test('group and self direct messages', async (t) => {
    const group = await send(othello, { type: 'private', to: [iago.user_id, hamlet.user_id], content: 'group' });
    t.equal(group.status, 200);
    const [g] = (await history(iago, { narrow: [['id', String(group.body.id)]] })).messages;
    t.same((g?.display_recipient as Msg[]).map((u) => u.id), [iago.user_id, hamlet.user_id, othello.user_id].sort((a, b) => a - b));
    const self = await send(hamlet, { type: 'private', to: [hamlet.user_id], content: 'note to self' });
    const [s] = (await history(hamlet, { narrow: [['id', String(self.body.id)]] })).messages;
    t.same((s?.display_recipient as Msg[]).map((u) => u.id), [hamlet.user_id]);
  });

  t.test('documented errors, each changing nothing', async (t) => {
    const before = await count();
    const cases: Array<[string, Record<string, unknown>, { status: number; body: Record<string, unknown> }, typeof hamlet?]> = [
      ['unknown stream name', { type: 'stream', to: 'nope', topic: 'x', content: 'x' }, { status: 400, body: { result: 'error', code: 'STREAM_DOES_NOT_EXIST', msg: "Channel 'nope' does not exist", stream: 'nope' } }],
      ['unknown stream id', { type: 'stream', to: 99999, topic: 'x', content: 'x' }, { status: 400, body: { result: 'error', code: 'STREAM_DOES_NOT_EXIST', msg: "Channel with ID '99999' does not exist", stream_id: 99999 } }],
      ['unknown email', { type: 'private', to: ['nobody@zulip.test'], content: 'x' }, { status: 400, body: { result: 'error', code: 'BAD_REQUEST', msg: "Invalid email 'nobody@zulip.test'" } }],
      ['unknown user id', { type: 'private', to: [99999], content: 'x' }, { status: 400, body: { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid user ID 99999' } }],
      ['mixed recipients', { type: 'private', to: JSON.stringify([othello.user_id, 'x@zulip.test']), content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Recipient lists may contain emails or user IDs, but not both.' } }],
      ['no recipients', { type: 'private', to: [], content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Message must have recipients' } }],
      ['empty content', { type: 'stream', to: 'Denmark', topic: 'x', content: '  \n ' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Message must not be empty' } }],
      ['missing topic', { type: 'stream', to: 'Denmark', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Missing topic' } }],
      ['empty topic', { type: 'stream', to: 'Denmark', topic: '   ', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: "Topic can't be empty" } }],
      ['missing content', { type: 'stream', to: 'Denmark', topic: 'x' }, { status: 400, body: { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'content' argument", var_name: 'content' } }],
      ['missing to', { type: 'stream', topic: 'x', content: 'x' }, { status: 400, body: { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'to' argument" } }],
      ['bad type', { type: 'carrier-pigeon', to: 'Denmark', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Invalid message type' } }],
      ['private stream, not subscribed', { type: 'stream', to: 'Secret', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: "Not authorized to send to channel 'Secret'" } }, iago],
      ['guest, public stream not subscribed', { type: 'stream', to: 'Denmark', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: "Not authorized to send to channel 'Denmark'" } }, polonius],
      ['admins-only stream, member', { type: 'stream', to: 'Announcements', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Only organization administrators can send to this channel.' } }],
      ['admins-only stream, moderator', { type: 'stream', to: 'Announcements', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Only organization administrators can send to this channel.' } }, moderator],
      ['moderators-only stream, member', { type: 'stream', to: 'Moderated', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Only organization administrators and moderators can send to this channel.' } }],
      ['full-members stream, guest', { type: 'stream', to: 'Members', topic: 'x', content: 'x' }, { status: 400, body: { code: 'BAD_REQUEST', msg: 'Guests cannot send to this channel.' } }, polonius],
    ];
    for (const [name, params, expected, who] of cases) {
      const r = await send(who ?? hamlet, params);
      t.equal(r.status, expected.status, `${name}: status`);
      t.match(r.body, expected.body, `${name}: body`);
    }
    t.equal(await count(), before, 'no failed send stored a message');
  });

  t.test('post policies let the right people post', async (t) => {
    t.equal((await send(iago, { type: 'stream', to: 'Announcements', topic: 'x', content: 'admin' })).status, 200);
    t.equal((await send(moderator, { type: 'stream', to: 'Moderated', topic: 'x', content: 'moderator' })).status, 200);
    t.equal((await send(hamlet, { type: 'stream', to: 'Members', topic: 'x', content: 'full member' })).status, 200);
    t.equal((await send(othello, { type: 'stream', to: 'Secret', topic: 'x', content: 'subscriber' })).status, 200);
    t.equal((await send(desdemona, { type: 'stream', to: 'Denmark', topic: 'x', content: 'any member, unsubscribed, public stream' })).status, 200);
  });

  t.test('limits: long topics and content are truncated, not rejected (spec 8)', async (t) => {
    const topic = 't'.repeat(70);
    const content = 'é'.repeat(6000); // 12000 bytes
    const r = await send(hamlet, { type: 'stream', to: 'Denmark', topic, content });
    t.equal(r.status, 200);
    const [m] = (await history(hamlet, { narrow: [['id', String(r.body.id)]], apply_markdown: false })).messages;
    t.equal(m?.subject, `${'t'.repeat(57)}...`);
    t.equal([...(m?.subject as string)].length, 60);
    t.ok(Buffer.byteLength(m?.content as string) <= 10000, 'at most 10000 bytes');
    t.match(m?.content, /\n\[message truncated\]$/);
    const ok = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'x'.repeat(60), content: 'a'.repeat(10000) });
    const [m2] = (await history(hamlet, { narrow: [['id', String(ok.body.id)]], apply_markdown: false })).messages;
    t.equal(m2?.subject, 'x'.repeat(60), 'exactly 60 characters is kept');
    t.equal(m2?.content, 'a'.repeat(10000), 'exactly 10000 bytes is kept');
  });

  t.test('Idempotency-Key: a retry returns the same id and sends nothing twice', async (t) => {
    const before = (await history(othello)).messages.length;
    const params = { type: 'stream', to: 'Denmark', topic: 'retry', content: 'once' };
    const a = await send(hamlet, params, { headers: { 'idempotency-key': 'k-1' } });
    const b = await send(hamlet, params, { headers: { 'idempotency-key': 'k-1' } });
    t.equal(a.status, 200);
    t.equal(b.body.id, a.body.id);
    const parallel = await Promise.all([1, 2, 3, 4].map(() => send(hamlet, { ...params, content: 'parallel' }, { headers: { 'idempotency-key': 'k-2' } })));
    t.equal(new Set(parallel.map((r) => r.body.id)).size, 1, 'concurrent retries agree');
    const other = await send(othello, params, { headers: { 'idempotency-key': 'k-1' } });
    t.not(other.body.id, a.body.id, 'keys are per user');
    t.equal((await history(othello)).messages.length, before + 3);
    const events = (await w.notifications()).filter((n) => n.event.type === 'message' && [a.body.id, parallel[0]?.body.id].includes(n.event.message.id));
    t.equal(events.length, 2, 'one message event per distinct message');
  });

  t.test('the message event carries the full message, flags per user and local_id', async (t) => {
    const r = await send(othello, { type: 'stream', to: 'Denmark', topic: 'event', content: 'hi @**King Hamlet**', queue_id: 'q-123', local_id: '17.01', read_by_sender: true });
    const [n] = (await w.notifications()).filter((x) => x.event.type === 'message' && x.event.message.id === r.body.id);
    t.ok(n, 'a notify was written');
    t.equal(n?.realm_id, sys.realmId);
    t.equal(n?.sender_queue_id, 'q-123');
    t.equal(n?.local_id, '17.01');
    t.same(n?.users[0], { id: othello.user_id, flags: ['read'] }, 'sender first, read by sender');
    t.same(n?.users.find((u: Msg) => u.id === hamlet.user_id), { id: hamlet.user_id, flags: ['mentioned'] });
    t.ok(n?.users.includes(iago.user_id), 'a recipient without flags is a bare id (the events service gives it flags: [])');
    t.equal(n?.users.length, 4, 'every subscriber and nobody else');
    t.match(n?.event.message, {
      id: r.body.id,
      type: 'stream',
      content: '<p>hi <span class="user-mention" data-user-id="' + hamlet.user_id + '">@King Hamlet</span></p>',
      content_type: 'text/html',
      raw_content: 'hi @**King Hamlet**',
      sender_delivery_email: othello.email,
      sender_avatar_source: 'G',
      sender_avatar_version: 1,
      avatar_url: /^https:\/\/secure\.gravatar\.com\/avatar\//,
      stream_id: w.id('Denmark'),
      subject: 'event',
    });
    const [sent] = (await w.notifications()).filter((x) => x.event.type === 'message' && x.event.message.id === r.body.id);
    t.ok(sent);
  });

  t.test('mentions and wildcards set flags', async (t) => {
    const all = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'wild', content: '@**all** look' });
    const [m] = (await history(othello, { narrow: [['id', String(all.body.id)]] })).messages;
    t.same(m?.flags, ['wildcard_mentioned']);
    const silent = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'wild', content: `@_**Othello, the Moor of Venice|${othello.user_id}** quietly` });
    const [s] = (await history(othello, { narrow: [['id', String(silent.body.id)]] })).messages;
    t.same(s?.flags, [], 'silent mentions do not notify');
    t.match(s?.content, /class="user-mention silent"/);
    const me = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'wild', content: '/me waves' });
    const [mm] = (await history(othello, { narrow: [['id', String(me.body.id)]] })).messages;
    t.equal(mm?.is_me_message, true);
  });

  t.test('bots send unread by default (API clients)', async (t) => {
    await w.subscribe('Denmark', [bot.user_id]);
    const r = await send(bot, { type: 'stream', to: 'Denmark', topic: 'bot', content: 'beep' }, { userAgent: 'ZulipPython/0.9.1 (Ubuntu; 24.04)' });
    const [m] = (await history(bot, { narrow: [['id', String(r.body.id)]] })).messages;
    t.same(m?.flags, []);
    t.equal(m?.client, 'ZulipPython');
  });

  t.test('anchors, include_anchor and found_* (spec 4.9)', async (t) => {
    await w.createStream('Anchors', [hamlet.user_id]);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await send(hamlet, { type: 'stream', to: 'Anchors', topic: 'a', content: `m${i}` })).body.id as number);
    const narrow = [['stream', 'Anchors']];
    const idsOf = (b: { messages: Msg[] }) => b.messages.map((m) => m.id);
    const newest = await history(hamlet, { narrow, num_before: 2 });
    t.same(idsOf(newest), ids.slice(3));
    t.match(newest, { anchor: 10000000000000000, found_anchor: false, found_newest: true, found_oldest: false, history_limited: false });
    const oldest = await history(hamlet, { narrow, anchor: 'oldest', num_before: 0, num_after: 2 });
    t.same(idsOf(oldest), ids.slice(0, 2));
    t.match(oldest, { anchor: 0, found_oldest: true, found_newest: false });
    const mid = await history(hamlet, { narrow, anchor: ids[2], num_before: 1, num_after: 1 });
    t.same(idsOf(mid), ids.slice(1, 4));
    t.match(mid, { anchor: ids[2], found_anchor: true, found_oldest: false, found_newest: false });
    const excl = await history(hamlet, { narrow, anchor: ids[2], num_before: 1, num_after: 1, include_anchor: false });
    t.same(idsOf(excl), [ids[1], ids[3]]);
    t.equal(excl.found_anchor, false);
    const all = await history(hamlet, { narrow, anchor: ids[2], num_before: 10, num_after: 10 });
    t.same(idsOf(all), ids);
    t.match(all, { found_oldest: true, found_newest: true, found_anchor: true });
    const only = await history(hamlet, { narrow, anchor: ids[4], num_before: 0, num_after: 0 });
    t.same(idsOf(only), [ids[4]]);
    const firstUnread = await history(hamlet, { narrow, anchor: 'first_unread', num_before: 0, num_after: 1 });
    t.same(idsOf(firstUnread), [ids[0], ids[1]], 'the anchor (the oldest unread: the test client does not read its own) and one after');
    t.equal(firstUnread.anchor, ids[0]);
    const legacy = await history(hamlet, { narrow, anchor: undefined, use_first_unread_anchor: true, num_before: 0, num_after: 1 });
    t.same(idsOf(legacy), [ids[0], ids[1]]);
    await sys.client(hamlet).post('/messages/flags', { messages: ids, op: 'add', flag: 'read' });
    const noneUnread = await history(hamlet, { narrow, anchor: 'first_unread', num_before: 1, num_after: 1 });
    t.equal(noneUnread.anchor, 10000000000000000, 'no unread: the anchor is newest');
    t.same(idsOf(noneUnread), [ids[4]]);
  });

  t.test('GET /messages errors', async (t) => {
    const cap = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 4000, num_after: 1001 });
    t.equal(cap.status, 400);
    t.match(cap.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Too many messages requested (maximum 5000).' });
    const atCap = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 4000, num_after: 1000 });
    t.equal(atCap.status, 200);
    const noAnchor = await sys.client(hamlet).get('/messages', { num_before: 1, num_after: 1 });
    t.match(noAnchor.body, { result: 'error', code: 'BAD_REQUEST', msg: "Missing 'anchor' argument." });
    const badAnchor = await sys.client(hamlet).get('/messages', { anchor: 'sideways', num_before: 1, num_after: 1 });
    t.match(badAnchor.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid anchor' });
    const noBefore = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_after: 1 });
    t.match(noBefore.body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'num_before' argument", var_name: 'num_before' });
    const badNarrow = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: '[{"operator":' });
    t.equal(badNarrow.status, 400);
    t.match(badNarrow.body, { code: 'BAD_REQUEST', msg: 'Argument "narrow" is not valid JSON.' });
  });

  t.test('GET /messages/{id}', async (t) => {
    const r = await send(hamlet, { type: 'private', to: [othello.user_id], content: 'just us' });
    const ok = await sys.client(othello).get(`/messages/${r.body.id}`);
    t.equal(ok.status, 200);
    t.match(ok.body, { result: 'success', raw_content: 'just us', message: { id: r.body.id, content: '<p>just us</p>', flags: [] } });
    const denied = await sys.client(iago).get(`/messages/${r.body.id}`);
    t.equal(denied.status, 400);
    t.match(denied.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
    const missing = await sys.client(iago).get('/messages/999999');
    t.match(missing.body, { code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
  });

  t.test('multipart and JSON bodies are accepted like form bodies', async (t) => {
    const multi = await sys.client(hamlet).post('/messages', { type: 'private', to: JSON.stringify([othello.user_id]), content: 'multipart' }, { encoding: 'multipart' });
    t.equal(multi.status, 200, JSON.stringify(multi.body));
    const json = await sys.client(hamlet).post('/messages', { type: 'private', to: [othello.user_id], content: 'json' }, { encoding: 'json' });
    t.equal(json.status, 200, JSON.stringify(json.body));
  });
});

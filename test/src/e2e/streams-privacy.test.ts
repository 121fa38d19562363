/**
 * A stream made private, or archived, is closed at once: right after PATCH / DELETE
 * /streams/{id} answers, a non-subscriber reads none of its messages, topics or reactions
 * on any path, and their queues (all_public_streams included) get none of its events. The
 * archive's own rules (administrators only, listings, /register, name freed, messages kept)
 * and events are checked here too.
 */
import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { startSystem, type Account } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { verifyAction } from './events-verify.js';
import type { Msg } from './messages-fixtures.js';

t.test('streams made private or archived', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, desdemona } = sys.people;
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const ok = async (r: Promise<{ status: number; body: Msg }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const idOf = async (name: string, who: Account = hamlet) => (await ok(sys.client(who).get('/get_stream_id', { stream: name }))).stream_id as number;
  const history = async (who: Account, streamId: number) =>
    sys.client(who).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'stream', operand: streamId }] });
  /** Events of `poller` that concern the stream or its messages, after everything was relayed. */
  const eventsAbout = async (poller: QueuePoller, streamId: number, messageIds: number[]) => {
    let got: Msg[] = [];
    for (let i = 0; i < 4; i++) {
      await sys.flushOutboxes();
      await new Promise((r) => setTimeout(r, 100));
      got = [...got, ...(await poller.drain())];
    }
    return got.filter(
      (e) =>
        (e.type === 'message' && e.message.stream_id === streamId) ||
        (e.type === 'reaction' && messageIds.includes(e.message_id as number)) ||
        (e.type === 'update_message' && messageIds.includes(e.message_id as number)),
    );
  };

  t.test('made private: no message, topic, reaction or event reaches a non-subscriber', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Agora' }], principals: [hamlet.user_id, iago.user_id] }));
    const agora = await idOf('Agora');
    const before = (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: agora, topic: 'plans', content: 'public for now' }))).id as number;
    await ok(sys.client(hamlet).post(`/messages/${before}/reactions`, { emoji_name: 'tada' }));
    t.equal(((await ok(history(othello, agora))).messages as Msg[]).length, 1, 'othello reads the public stream');
    // Starring a message one never received gives a (historical) row, which outlives access.
    await ok(sys.client(othello).post('/messages/flags', { messages: [before], op: 'add', flag: 'starred' }));
    const starredOf = async (who: Account) => (await ok(sys.client(who).post('/register', { fetch_event_types: ['starred_messages'] }))).starred_messages as number[];
    t.same(await starredOf(othello), [before], 'othello starred it while the stream was public');
    const { poller: publicQueue } = await QueuePoller.register(sys.client(othello), { all_public_streams: true, event_types: ['message', 'reaction', 'update_message'] });
    const { poller: ownQueue } = await QueuePoller.register(sys.client(othello), { event_types: ['message', 'reaction', 'update_message'] });

    await ok(sys.client(desdemona).patch(`/streams/${agora}`, { is_private: true }));
    // At once, on every read path.
    t.same(((await ok(history(othello, agora))).messages as Msg[]).map((m) => m.id), [], 'the stream narrow shows othello nothing');
    t.same(((await ok(sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'streams', operand: 'public' }] }))).messages as Msg[]).filter((m) => m.stream_id === agora), [], 'nor streams:public');
    t.same((await sys.client(othello).get(`/messages/${before}`)).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).get(`/users/me/${agora}/topics`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).post(`/messages/${before}/reactions`, { emoji_name: 'octopus' })).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).get(`/streams/${agora}`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.notOk(((await ok(sys.client(othello).get('/streams'))).streams as Msg[]).some((s) => s.stream_id === agora), 'GET /streams leaves it out');
    const searched = await ok(sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'search', operand: 'public' }] }));
    t.notOk((searched.messages as Msg[]).some((m) => m.id === before), 'nor a search');
    t.same((await ok(sys.client(othello).get('/messages/matches_narrow', { msg_ids: [before], narrow: [] }))).messages, {}, 'nor matches_narrow');
    t.same(await starredOf(othello), [], "nor /register's starred_messages");
    const starred = await ok(sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }] }));
    t.same(starred.messages, [], 'nor the starred narrow');
    t.same((await sys.client(othello).get(`/messages/${before}/history`)).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).get(`/streams/${agora}/members`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).get(`/users/${hamlet.user_id}/subscriptions/${agora}`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.same((await sys.client(othello).patch(`/messages/${before}`, { topic: 'mine now' })).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    const refused = await sys.client(othello).post('/messages', { type: 'stream', to: agora, topic: 'plans', content: 'let me in' });
    t.same(refused.body, { result: 'error', msg: "Not authorized to send to channel 'Agora'", code: 'BAD_REQUEST' });

    // New activity in the stream reaches no queue of othello's.
    const after = (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: agora, topic: 'plans', content: 'private now' }))).id as number;
    await ok(sys.client(hamlet).post(`/messages/${before}/reactions`, { emoji_name: 'heart' }));
    await ok(sys.client(iago).post(`/messages/${after}/reactions`, { emoji_name: 'octopus' }));
    await ok(sys.client(hamlet).patch(`/messages/${after}`, { content: 'private now, edited' }));
    t.same(await eventsAbout(publicQueue, agora, [before, after]), [], 'the all_public_streams queue hears nothing of it');
    t.same(await eventsAbout(ownQueue, agora, [before, after]), [], 'nor othello’s own queue');
    // The subscribers still do.
    const read = ((await ok(history(iago, agora))).messages as Msg[]).filter((m) => m.subject !== 'stream events');
    t.same(read.map((m) => m.id), [before, after], "a subscriber still reads both messages (besides the bot's notice)");
    t.equal((await ok(sys.client(iago).get(`/messages/${before}`))).message.reactions.length, 2, 'with their reactions');
  });

  t.test('DELETE /streams/{id}: permissions and errors', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Hideout' }], invite_only: true }));
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Forum' }] }));
    const hideout = await idOf('Hideout');
    const forum = await idOf('Forum');
    const member = await sys.client(hamlet).delete(`/streams/${forum}`);
    t.same([member.status, member.body], [400, { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' }]);
    t.same((await sys.client(othello).delete(`/streams/${hideout}`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }, 'a private stream is not revealed');
    t.same((await sys.client(desdemona).delete('/streams/999999')).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    // Administrators archive private streams they are not subscribed to as well.
    t.same(await ok(sys.client(desdemona).delete(`/streams/${hideout}`)), { result: 'success', msg: '' });
    t.same((await sys.client(desdemona).delete(`/streams/${hideout}`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }, 'an archived stream is gone');
  });

  t.test('archiving: events, listings, name freed, messages kept but closed', async (t) => {
    const laertes = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes', role: Role.MEMBER });
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Market' }], principals: [hamlet.user_id, othello.user_id] }));
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Square' }], principals: [hamlet.user_id] }));
    const market = await idOf('Market');
    const square = await idOf('Square');
    const sent = (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: market, topic: 'wares', content: 'fish' }))).id as number;
    const unreadOf = async (who: Account) =>
      ((await ok(sys.client(who).post('/register', { fetch_event_types: ['message', 'update_message_flags'] }))).unread_msgs as { streams: Msg[] }).streams.flatMap((u) => u.unread_message_ids as number[]);
    t.ok((await unreadOf(othello)).includes(sent), 'othello has it unread');
    // othello left Square's cousin: a former subscription stays among `unsubscribed` until archived.
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Square' }], principals: [othello.user_id] }));
    await ok(sys.client(othello).delete('/users/me/subscriptions', { subscriptions: ['Square'] }));
    await db.query('INSERT INTO subscriptions.default_stream (realm_id, stream_id) VALUES ($1, $2)', [sys.realmId, square]);

    const params = { event_types: ['stream', 'subscription', 'default_streams'], include_subscribers: true, apply_markdown: true, client_gravatar: false };
    const events = await verifyAction(t, sys, sys.client(hamlet), () => ok(sys.client(desdemona).delete(`/streams/${market}`)), { params, expect: ['subscription/remove', 'stream/delete'] });
    t.match(events.at(-1), { type: 'stream', op: 'delete', stream_ids: [market], streams: [{ stream_id: market, name: 'Market', invite_only: false }] }, 'the stream as its users knew it');
    await verifyAction(t, sys, sys.client(laertes), () => ok(sys.client(desdemona).delete(`/streams/${square}`)), { params, expect: ['stream/delete', 'default_streams'] });

    t.notOk(((await ok(sys.client(desdemona).get('/streams', { include_all_active: true }))).streams as Msg[]).some((s) => s.stream_id === market), 'gone from GET /streams');
    const reg = await ok(sys.client(othello).post('/register', { fetch_event_types: ['subscription', 'stream'] }));
    for (const k of ['subscriptions', 'unsubscribed', 'never_subscribed', 'streams']) {
      t.notOk((reg[k] as Msg[]).some((s) => s.stream_id === market || s.stream_id === square), `gone from /register's ${k}`);
    }
    t.same((await sys.client(othello).get('/get_stream_id', { stream: 'Market' })).body, { result: 'error', msg: "Invalid channel name 'Market'", code: 'BAD_REQUEST' });
    const archived = await db.query<{ name: string; invite_only: boolean }>('SELECT name, invite_only FROM subscriptions.stream WHERE id = $1', [market]);
    t.match(archived.rows[0], { name: /^[0-9a-f]{7}!DEACTIVATED:Market$/, invite_only: true }, "Zulip's archived name");
    // The name is free for a new stream.
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Market' }] }));
    t.not(await idOf('Market'), market);
    // Messages are kept, but nobody reads them through the stream any more.
    t.equal((await db.query('SELECT 1 FROM messages.message WHERE id = $1', [sent])).rowCount, 1, 'the message is kept');
    t.same((await sys.client(othello).get(`/messages/${sent}`)).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    // Zulip marks an archived stream's messages read for everyone; they leave the unread counts.
    t.notOk((await unreadOf(othello)).includes(sent), 'no longer counted');
    t.same((await sys.client(othello).get(`/users/me/${market}/topics`)).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    const refused = await sys.client(hamlet).post('/messages', { type: 'stream', to: market, topic: 'wares', content: 'more fish' });
    t.same(refused.body, { result: 'error', msg: `Channel with ID '${market}' does not exist`, code: 'STREAM_DOES_NOT_EXIST', stream_id: market });
  });
  t.test("a private stream's last subscriber leaving archives it, as Zulip does at our level", async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Attic' }], invite_only: true, principals: [hamlet.user_id, othello.user_id] }));
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Porch' }], principals: [hamlet.user_id] }));
    const attic = await idOf('Attic');
    const porch = await idOf('Porch');
    const sent = (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: attic, topic: 'boxes', content: 'dusty' }))).id as number;
    const streamRow = async (id: number) => (await db.query<{ name: string; is_archived: boolean }>('SELECT name, is_archived FROM subscriptions.stream WHERE id = $1', [id])).rows[0];

    await ok(sys.client(othello).delete('/users/me/subscriptions', { subscriptions: ['Attic'] }));
    t.match(await streamRow(attic), { name: 'Attic', is_archived: false }, 'one subscriber left: kept');
    await ok(sys.client(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Porch'] }));
    t.match(await streamRow(porch), { name: 'Porch', is_archived: false }, 'a public stream is kept without subscribers');

    const params = { event_types: ['stream', 'subscription'], include_subscribers: true };
    // The administrator hears the subscriber go, then the stream go; the leaver that he left, then the stream go.
    const adminEvents = verifyAction(t, sys, sys.client(desdemona), async () => {
      await verifyAction(t, sys, sys.client(hamlet), () => ok(sys.client(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Attic'] })), { params, expect: ['subscription/remove', 'stream/delete'] });
    }, { params, expect: ['subscription/peer_remove', 'stream/delete'] });
    t.match((await adminEvents).at(-1), { type: 'stream', op: 'delete', streams: [{ stream_id: attic, name: 'Attic', invite_only: true }] });
    t.match(await streamRow(attic), { name: /^[0-9a-f]{7}!DEACTIVATED:Attic$/, is_archived: true }, "archived under Zulip's name");
    t.notOk(((await ok(sys.client(desdemona).get('/streams', { include_all_active: true }))).streams as Msg[]).some((s) => s.stream_id === attic), 'gone from GET /streams');
    t.same((await sys.client(desdemona).get(`/messages/${sent}`)).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' }, 'its messages closed');
    t.same((await sys.client(hamlet).post(`/messages/${sent}/reactions`, { emoji_name: 'tada' })).body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    // The name is free again.
    await ok(sys.client(othello).post('/users/me/subscriptions', { subscriptions: [{ name: 'Attic' }], invite_only: true }));
    t.not(await idOf('Attic', othello), attic);

    // The two last subscribers leaving at once: archived once both are gone.
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Twins' }], invite_only: true, principals: [hamlet.user_id, othello.user_id] }));
    const twins = await idOf('Twins');
    await Promise.all([hamlet, othello].map((who) => ok(sys.client(who).delete('/users/me/subscriptions', { subscriptions: ['Twins'] }))));
    t.match(await streamRow(twins), { is_archived: true }, 'archived after both left together');
  });
});

/**
 * DELETE /messages/{message_id} end to end: the realm's delete policy and time limit
 * (Zulip's validate_can_delete_message), the message leaving every read path with its
 * flags, unread counts and reactions, `delete_message` events per message or in bulk
 * (bulk_message_deletion) only to those who could read it, and edits and moves of the
 * topic still working around the gap. Realm settings are changed through PATCH /realm.
 */
import t, { type Test } from 'tap';
import { createPool } from '@zc/shared/db';
import type { Params } from '../client.js';
import type { Account } from '../harness.js';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { verifyAction } from './events-verify.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('deleting messages', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  await w.createStream('Verona', [hamlet.user_id, othello.user_id, iago.user_id]);
  await w.createStream('Secret', [desdemona.user_id, hamlet.user_id], { invite_only: true });

  // PATCH /realm by the owner; the very next request must obey it (read your writes across services).
  const setRealm = async (settings: Params) => {
    const r = await sys.client(iago).patch('/realm', settings);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };
  const send = async (who: Account, to: string, content: string, topic = 'deletions') => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to, topic, content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const del = (who: Account, id: number | string) => sys.client(who).delete(`/messages/${id}`);
  const expectError = (t: Test, r: { status: number; body: Msg }, msg: string) => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };
  const exists = async (id: number) => ((await db.query('SELECT 1 FROM messages.message WHERE id = $1', [id])).rowCount ?? 0) > 0;

  t.test("the realm's policy: by default only administrators delete", async (t) => {
    const id = await send(hamlet, 'Verona', 'mine');
    expectError(t, await del(hamlet, id), "You don't have permission to delete this message");
    t.ok(await exists(id), 'nothing changed');
    t.equal((await del(desdemona, id)).status, 200, 'an administrator deletes anyone’s message');
    t.notOk(await exists(id));
    expectError(t, await del(desdemona, id), 'Invalid message(s)');
  });

  t.test('members deleting their own messages within the time limit', async (t) => {
    await setRealm({ delete_own_message_policy: 1, message_content_delete_limit_seconds: 600 });
    const mine = await send(hamlet, 'Verona', 'mine again');
    const theirs = await send(othello, 'Verona', 'not hamlet’s');
    expectError(t, await del(hamlet, theirs), "You don't have permission to delete this message");
    const old = await send(hamlet, 'Verona', 'long ago');
    await db.query("UPDATE messages.message SET date_sent = now() - interval '11 minutes' WHERE id = $1", [old]);
    expectError(t, await del(hamlet, old), 'The time limit for deleting this message has passed');
    t.equal((await del(iago, old)).status, 200, 'administrators have no time limit');
    t.same((await del(hamlet, mine)).body, { result: 'success', msg: '' });
    t.notOk(await exists(mine));
    t.ok(await exists(theirs));
    await setRealm({ message_content_delete_limit_seconds: 'unlimited' });
    // Taking the right away, and giving it back: each holds from the next request on.
    const after = await send(hamlet, 'Verona', 'too late');
    await setRealm({ delete_own_message_policy: 2 });
    expectError(t, await del(hamlet, after), "You don't have permission to delete this message");
    await setRealm({ delete_own_message_policy: 1 });
    t.same((await del(hamlet, after)).body, { result: 'success', msg: '' });
  });

  t.test('messages one cannot read cannot be deleted', async (t) => {
    const secret = await send(desdemona, 'Secret', 'hidden');
    expectError(t, await del(iago, secret), 'Invalid message(s)');
    expectError(t, await del(polonius, secret), 'Invalid message(s)');
    expectError(t, await del(hamlet, 99999999), 'Invalid message(s)');
    expectError(t, await del(hamlet, 'abc'), 'Invalid message(s)');
    t.ok(await exists(secret));
  });

  t.test('a deleted message leaves every read path, with its flags, unread counts and reactions', async (t) => {
    const keep = await send(hamlet, 'Verona', 'keep me');
    const gone = await send(hamlet, 'Verona', 'delete me @**Othello, the Moor of Venice**');
    await sys.client(othello).post(`/messages/${gone}/reactions`, { emoji_name: 'tada' });
    await sys.client(othello).post('/messages/flags', { messages: [gone], op: 'add', flag: 'starred' });
    const before = (await sys.client(othello).post('/register', { event_types: ['message'], fetch_event_types: ['message', 'update_message_flags', 'starred_messages'] })).body as Msg;
    t.ok((before.unread_msgs.mentions as number[]).includes(gone));
    t.ok((before.starred_messages as number[]).includes(gone));

    t.equal((await del(hamlet, gone)).status, 200);
    expectError(t, await sys.client(othello).get(`/messages/${gone}`), 'Invalid message(s)');
    const history = await sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [['stream', 'Verona'], ['topic', 'deletions']] } as never);
    const ids = (history.body.messages as Msg[]).map((m) => m.id);
    t.ok(ids.includes(keep) && !ids.includes(gone), 'gone from history');
    const search = await sys.client(othello).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [['search', 'delete']] } as never);
    t.notOk((search.body.messages as Msg[]).some((m) => m.id === gone), 'gone from search');
    const after = (await sys.client(othello).post('/register', { event_types: ['message'], fetch_event_types: ['message', 'update_message_flags', 'starred_messages'] })).body as Msg;
    t.notOk((after.unread_msgs.mentions as number[]).includes(gone), 'no longer an unread mention');
    t.equal(after.unread_msgs.count, before.unread_msgs.count - 1, 'the unread count follows');
    t.notOk((after.starred_messages as number[]).includes(gone), 'no longer starred');
    t.same((await db.query('SELECT 1 FROM messages.reaction WHERE message_id = $1', [gone])).rowCount, 0, 'its reactions went too');
    const topics = (await sys.client(othello).get(`/users/me/${w.id('Verona')}/topics`)).body.topics as Msg[];
    t.ok(topics.every((x) => x.max_id !== gone), 'topics no longer point at it');
  });

  t.test('delete_message events: bulk or one per message, only to those who could read it', async (t) => {
    const bulk = { event_types: ['delete_message'], client_capabilities: { bulk_message_deletion: true } };
    const { poller: othelloBulk } = await QueuePoller.register(sys.client(othello), bulk);
    const { poller: othelloOld } = await QueuePoller.register(sys.client(othello), { event_types: ['delete_message'] });
    const { poller: hamletQ } = await QueuePoller.register(sys.client(hamlet), bulk);
    const { poller: iagoAll } = await QueuePoller.register(sys.client(iago), { ...bulk, all_public_streams: true });
    const { poller: poloniusQ } = await QueuePoller.register(sys.client(polonius), bulk);

    const secret = await send(desdemona, 'Secret', 'burn after reading');
    const open = await send(othello, 'Verona', 'public and brief', 'brief');
    const dm = (await sys.client(hamlet).post('/messages', { type: 'private', to: [othello.user_id], content: 'psst' })).body.id as number;
    t.equal((await del(desdemona, secret)).status, 200);
    t.equal((await del(desdemona, open)).status, 200);
    // Administrators cannot read others' direct messages; the sender deletes it under the members' policy set above.
    expectError(t, await del(desdemona, dm), 'Invalid message(s)');
    t.equal((await del(hamlet, dm)).status, 200);

    const withoutId = (events: Msg[]) => events.map(({ id: _id, ...e }) => e);
    t.same(withoutId(await othelloBulk.collect(2)), [
      { type: 'delete_message', message_type: 'stream', message_ids: [open], stream_id: w.id('Verona'), topic: 'brief' },
      { type: 'delete_message', message_type: 'private', message_ids: [dm] },
    ]);
    t.same(withoutId(await othelloOld.collect(2)), [
      { type: 'delete_message', message_type: 'stream', message_id: open, stream_id: w.id('Verona'), topic: 'brief' },
      { type: 'delete_message', message_type: 'private', message_id: dm },
    ], 'without bulk_message_deletion: message_id');
    t.same((await hamletQ.collect(3)).map((e) => e.message_ids), [[secret], [open], [dm]], 'hamlet could read all three');
    t.same((await iagoAll.collect(1)).map((e) => e.message_ids), [[open]], 'all_public_streams: the public one only');
    t.same(await iagoAll.drain(), []);
    t.same(await othelloBulk.drain(), [], 'othello never hears of the private stream message');
    t.same(await poloniusQ.drain(), [], 'nor does the guest');
  });

  t.test('edits and moves keep working around the gap', async (t) => {
    const a = await send(hamlet, 'Verona', 'first', 'gappy');
    const b = await send(hamlet, 'Verona', 'second', 'gappy');
    const c = await send(hamlet, 'Verona', 'third', 'gappy');
    t.equal((await del(hamlet, b)).status, 200);
    const move = await sys.client(hamlet).patch(`/messages/${a}`, { topic: 'tidy', propagate_mode: 'change_all', send_notification_to_old_thread: false, send_notification_to_new_thread: false });
    t.equal(move.status, 200, JSON.stringify(move.body));
    const moved = (await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [['stream', 'Verona'], ['topic', 'tidy']] } as never)).body.messages as Msg[];
    t.same(moved.map((m) => m.id), [a, c]);
    t.equal((await sys.client(hamlet).patch(`/messages/${c}`, { content: 'third, edited' })).status, 200);
    t.equal((await sys.client(hamlet).get(`/messages/${c}/history`)).status, 200);
  });

  t.test('apply-events check', async (t) => {
    const h = sys.client(hamlet);
    const params = { client_gravatar: false, apply_markdown: true, event_types: ['message', 'update_message_flags', 'delete_message'], client_capabilities: { bulk_message_deletion: true } };
    const one = await send(othello, 'Verona', 'unread for hamlet', 'apply');
    await send(othello, 'Verona', 'the newest stays', 'apply');
    await verifyAction(t, sys, h, () => sys.client(othello).delete(`/messages/${one}`), { params, expect: ['delete_message'] });
    const two = await send(othello, 'Verona', 'again', 'apply');
    await send(othello, 'Verona', 'and the newest again', 'apply');
    await verifyAction(t, sys, h, () => sys.client(othello).delete(`/messages/${two}`), { params: { ...params, client_capabilities: {} }, expect: ['delete_message'] });
  });
});

/**
 * Flags and read state (spec 3, 4.3–4.5, 4.17), their update_message_flags events, the
 * /register state the messages service serves, and concurrent sends through two replicas
 * of the messages service (ids grow in commit order, flags stay right).
 */
import t from 'tap';
import { messagesRpc, type Actor } from '@zc/shared/contracts';
import { startSystem, type Account } from '../harness.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

// Small batches and no time at all: mark_all_as_read must stop after one batch each time.
process.env.ZC_MARK_ALL_AS_READ_BATCH_SIZE = '2';
process.env.ZC_MARK_ALL_AS_READ_TIME_LIMIT_MS = '0';

t.test('messages: flags, read state, register state, concurrency', async (t) => {
  const sys = await startSystem(t, { replicas: { messages: 2 } });
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona } = sys.people;
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id, iago.user_id, desdemona.user_id]);
  await w.createStream('Muted', [hamlet.user_id, othello.user_id]);
  await w.createStream('Public', [iago.user_id]);

  const send = async (who: Account, params: Record<string, unknown>) => {
    const r = await sys.client(who).post('/messages', params as never);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const flagsOf = async (who: Account, id: number) => {
    const r = await sys.client(who).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['id', String(id)]] });
    return (r.body.messages as Msg[])[0]?.flags as string[] | undefined;
  };
  const flag = (who: Account, messages: unknown, op: string, f: string) => sys.client(who).post('/messages/flags', { messages: messages as never, op, flag: f });
  const actorOf = (a: Account, role = 400): Actor => ({ realm_id: sys.realmId, user_id: a.user_id, role, email: a.email, full_name: a.full_name, is_bot: false });
  const registerState = async (a: Account, fetch: string[]) => {
    const bus = sys.services.get('messages')![0]!.ctx.bus;
    return (await bus.request(messagesRpc.registerState, { actor: actorOf(a), fetch, options: {} })).state as Msg;
  };
  const flagEvents = async (userId: number) =>
    (await w.notifications()).filter((n) => n.event.type === 'update_message_flags' && n.users.length === 1 && n.users[0] === userId).map((n) => n.event);

  t.test('POST /messages/flags adds and removes read, starred, collapsed', async (t) => {
    const a = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'flags', content: 'one' });
    const b = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'flags', content: 'two @**Othello, the Moor of Venice**' });
    const before = (await flagEvents(othello.user_id)).length;
    const read = await flag(othello, [a, b], 'add', 'read');
    t.equal(read.status, 200);
    t.same(read.body, { result: 'success', msg: '', messages: [a, b] });
    t.same(await flagsOf(othello, a), ['read']);
    const again = await flag(othello, [a], 'add', 'read');
    t.same(again.body.messages, [a], 'the requested ids, as Zulip answers');
    t.same(await flagsOf(othello, b), ['read', 'mentioned']);
    t.same((await flag(othello, [a], 'add', 'starred')).body.messages, [a]);
    t.same((await flag(othello, [a], 'add', 'collapsed')).body.messages, [a]);
    t.same(await flagsOf(othello, a), ['read', 'starred', 'collapsed']);
    await flag(othello, [a], 'remove', 'collapsed');
    await flag(othello, [a, b], 'remove', 'read');
    t.same(await flagsOf(othello, a), ['starred']);
    const events = (await flagEvents(othello.user_id)).slice(before);
    t.same(events[0], { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'read', messages: [a, b], all: false });
    t.same(events[1], { type: 'update_message_flags', op: 'add', operation: 'add', flag: 'starred', messages: [a], all: false }, 'a no-op change sends no event');
    const removal = events.find((e) => e.op === 'remove' && e.flag === 'read');
    t.same(removal, {
      type: 'update_message_flags',
      op: 'remove',
      operation: 'remove',
      flag: 'read',
      messages: [a, b],
      all: false,
      message_details: {
        [a]: { type: 'stream', stream_id: w.id('Denmark'), topic: 'flags', unmuted_stream_msg: true },
        [b]: { type: 'stream', stream_id: w.id('Denmark'), topic: 'flags', unmuted_stream_msg: true, mentioned: true },
      },
    });
    const dm = await send(iago, { type: 'private', to: [othello.user_id, hamlet.user_id], content: 'group' });
    await flag(othello, [dm], 'add', 'read');
    await flag(othello, [dm], 'remove', 'read');
    const last = (await flagEvents(othello.user_id)).pop();
    t.same(last?.message_details, { [dm]: { type: 'private', user_ids: [iago.user_id, hamlet.user_id].sort((x, y) => x - y) } });
  });

  t.test('flag errors (status, code, msg) change nothing', async (t) => {
    const a = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'errors', content: 'x' });
    const secret = await send(hamlet, { type: 'private', to: [iago.user_id], content: 'not for othello' });
    const cases: Array<[unknown, string, string, string]> = [
      [[a], 'add', 'sparkly', "Invalid flag: 'sparkly'"],
      [[a], 'add', 'mentioned', "Flag not editable: 'mentioned'"],
      [[a], 'add', 'historical', "Flag not editable: 'historical'"],
      [[a], 'toggle', 'read', "Invalid message flag operation: 'toggle'"],
      [[a, 99999], 'add', 'starred', 'Invalid message(s)'],
      [[a, secret], 'add', 'starred', 'Invalid message(s)'],
    ];
    for (const [messages, op, f, msg] of cases) {
      const r = await flag(othello, messages, op, f);
      t.equal(r.status, 400, msg);
      t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
    }
    t.same(await flagsOf(othello, a), [], 'the valid message in a failed request was not starred');
    const missing = await sys.client(othello).post('/messages/flags', { op: 'add', flag: 'read' });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'messages' argument" });
  });

  t.test('a public stream message never received can be starred (historical)', async (t) => {
    const p = await send(iago, { type: 'stream', to: 'Public', topic: 'x', content: 'public' });
    const r = await flag(othello, [p], 'add', 'starred');
    t.equal(r.status, 200);
    const got = await sys.client(othello).get('/messages', { anchor: p, num_before: 0, num_after: 0, narrow: [['stream', 'Public']] });
    t.same((got.body.messages as Msg[])[0]?.flags, ['read', 'starred', 'historical']);
  });

  t.test('mark_stream_as_read and mark_topic_as_read', async (t) => {
    const ids = [
      await send(hamlet, { type: 'stream', to: 'Muted', topic: 'a', content: '1' }),
      await send(hamlet, { type: 'stream', to: 'Muted', topic: 'b', content: '2' }),
      await send(hamlet, { type: 'stream', to: 'Muted', topic: 'B', content: '3' }),
    ];
    const topic = await sys.client(othello).post('/mark_topic_as_read', { stream_id: w.id('Muted'), topic_name: 'b' });
    t.same(topic.body, { result: 'success', msg: '' });
    t.same(await flagsOf(othello, ids[0] as number), []);
    t.same(await flagsOf(othello, ids[1] as number), ['read']);
    t.same(await flagsOf(othello, ids[2] as number), ['read'], 'topics match case-insensitively');
    const stream = await sys.client(othello).post('/mark_stream_as_read', { stream_id: w.id('Muted') });
    t.same(stream.body, { result: 'success', msg: '' });
    t.same(await flagsOf(othello, ids[0] as number), ['read']);
    const badStream = await sys.client(othello).post('/mark_stream_as_read', { stream_id: 99999 });
    t.equal(badStream.status, 400);
    t.match(badStream.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid channel ID' });
    const badTopic = await sys.client(othello).post('/mark_topic_as_read', { stream_id: w.id('Muted'), topic_name: 'nothing here' });
    t.match(badTopic.body, { result: 'error', code: 'BAD_REQUEST', msg: "No such topic 'nothing here'" });
    const missing = await sys.client(othello).post('/mark_topic_as_read', { stream_id: w.id('Muted') });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'topic_name' argument" });
    const readEvents = (await flagEvents(othello.user_id)).filter((e) => e.flag === 'read' && e.op === 'add');
    t.same(readEvents.slice(-2).map((e) => e.messages), [[ids[1], ids[2]], [ids[0]]]);
  });

  t.test('mark_all_as_read works in batches, newest first, and says partially_completed', async (t) => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(iago, { type: 'private', to: [desdemona.user_id], content: `m${i}` }));
    // Clear everything desdemona had unread, then start over with a known set.
    for (let i = 0; i < 100 && (await sys.client(desdemona).post('/mark_all_as_read')).body.result !== 'success'; i++);
    await flag(desdemona, ids, 'remove', 'read');
    const before = (await flagEvents(desdemona.user_id)).length;
    const r1 = await sys.client(desdemona).post('/mark_all_as_read');
    t.equal(r1.status, 200);
    t.same(r1.body, { result: 'partially_completed', msg: '', code: 'REQUEST_TIMEOUT' });
    t.same(await flagsOf(desdemona, ids[4] as number), ['read'], 'newest first');
    t.same(await flagsOf(desdemona, ids[0] as number), []);
    let rounds = 1;
    let last = r1;
    while (last.body.result === 'partially_completed' && rounds < 10) {
      last = await sys.client(desdemona).post('/mark_all_as_read');
      rounds++;
    }
    t.same(last.body, { result: 'success', msg: '' });
    t.equal(rounds, 3, '5 messages in batches of 2');
    for (const id of ids) t.same(await flagsOf(desdemona, id), ['read']);
    const events = (await flagEvents(desdemona.user_id)).slice(before);
    t.same(events.map((e) => e.messages), [[ids[3], ids[4]], [ids[1], ids[2]], [ids[0]]]);
  });

  t.test('register state: unread_msgs, starred, recent conversations, max_message_id', async (t) => {
    const carl = await sys.createUser({ email: 'carl@zulip.test', full_name: 'Carl' });
    w.remember(carl);
    // Carl joins by himself: someone else subscribing him would add the notification bot's
    // "subscribed you" direct messages to his unreads.
    const joined = await sys.client(carl).post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }, { name: 'Muted' }] });
    t.equal(joined.status, 200);
    await w.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [w.id('Muted'), carl.user_id]);
    await w.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [w.id('Denmark'), carl.user_id]);
    const s1 = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'news', content: 'hello' });
    const s2 = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'News', content: '@**Carl**' });
    const s3 = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'quiet', content: '@**all** in a muted topic' });
    const m1 = await send(hamlet, { type: 'stream', to: 'Muted', topic: 'x', content: 'muted stream' });
    const p1 = await send(hamlet, { type: 'private', to: [carl.user_id], content: 'dm' });
    const g1 = await send(othello, { type: 'private', to: [carl.user_id, hamlet.user_id], content: 'group' });
    const own = await send(carl, { type: 'private', to: [iago.user_id], content: 'sent by carl' });
    await flag(carl, [own], 'add', 'read');
    await flag(carl, [s1], 'add', 'starred');
    await w.setMuted('Muted', carl.user_id, true);
    await w.setTopicMuted('Denmark', carl.user_id, 'quiet', true);
    const state = await registerState(carl, ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations']);
    t.equal(state.max_message_id, own);
    t.same(state.unread_msgs, {
      count: 4,
      pms: [{ other_user_id: hamlet.user_id, sender_id: hamlet.user_id, unread_message_ids: [p1] }],
      streams: [
        { stream_id: w.id('Denmark'), topic: 'news', unread_message_ids: [s1, s2] },
        { stream_id: w.id('Denmark'), topic: 'quiet', unread_message_ids: [s3] },
        { stream_id: w.id('Muted'), topic: 'x', unread_message_ids: [m1] },
      ],
      huddles: [{ user_ids_string: [carl.user_id, hamlet.user_id, othello.user_id].sort((a, b) => a - b).join(','), unread_message_ids: [g1] }],
      mentions: [s2],
      old_unreads_missing: false,
    });
    t.same(state.starred_messages, [s1]);
    t.same(state.recent_private_conversations, [
      { max_message_id: own, user_ids: [iago.user_id] },
      { max_message_id: g1, user_ids: [hamlet.user_id, othello.user_id].sort((a, b) => a - b) },
      { max_message_id: p1, user_ids: [hamlet.user_id] },
    ]);
    const only = await registerState(carl, ['message']);
    t.same(Object.keys(only), ['max_message_id'], 'only what was asked for');
    const nothing = await registerState(await sys.createUser({ email: 'new@zulip.test', full_name: 'New' }), ['message']);
    t.equal(nothing.max_message_id, -1);
    const bus = sys.services.get('messages')![0]!.ctx.bus;
    t.same(await bus.request(messagesRpc.maxMessageId, { realm_id: sys.realmId, user_id: carl.user_id }), { max_message_id: own });
  });

  t.test('concurrent sends through two replicas: ids grow in commit order, flags stay right', async (t) => {
    const senders = [hamlet, othello, iago, desdemona];
    const sentBefore = new Set((await w.notifications()).filter((n) => n.event.type === 'message').map((n) => n.event.message.id));
    const results = await Promise.all(
      senders.flatMap((s) =>
        Array.from({ length: 15 }, (_, i) =>
          sys.client(s).post('/messages', { type: 'stream', to: 'Denmark', topic: 'race', content: `${s.full_name} ${i}`, read_by_sender: true }),
        ),
      ),
    );
    t.ok(results.every((r) => r.status === 200), 'all accepted');
    const ids = results.map((r) => r.body.id as number);
    t.equal(new Set(ids).size, 60, 'every message has its own id');
    const events = (await w.notifications()).filter((n) => n.event.type === 'message' && !sentBefore.has(n.event.message.id));
    const eventIds = events.map((n) => n.event.message.id as number);
    t.same([...eventIds].sort((a, b) => a - b), [...ids].sort((a, b) => a - b), 'one event per message');
    t.ok(eventIds.every((id, i) => i === 0 || id > (eventIds[i - 1] as number)), 'events leave in increasing id order');
    for (const n of events) {
      const senderId = n.event.message.sender_id;
      // A recipient without flags is a bare user id.
      const wrong = n.users.filter((u: number | Msg) => (typeof u === 'number' ? u === senderId : u.id === senderId ? u.flags.join() !== 'read' : u.flags.length !== 0));
      if (wrong.length) t.fail(`flags wrong on ${n.event.message.id}: ${JSON.stringify(wrong)}`);
    }
    const history = await sys.client(othello).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [['topic', 'race']] });
    const ms = history.body.messages as Msg[];
    t.equal(ms.length, 60);
    t.ok(ms.every((m) => (m.sender_id === othello.user_id ? m.flags.join() === 'read' : m.flags.length === 0)), "othello's flags: his own read, the rest unread");
  });
});

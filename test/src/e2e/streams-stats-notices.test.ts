/**
 * What the subscriptions service keeps or says beside its own requests: the notification
 * bot's "X subscribed you to ..." direct messages (Zulip's send_messages_for_new_subscribers),
 * first_message_id following messages moved between streams or deleted (with the stream
 * update event Zulip's check_update_first_message_id sends), and weekly traffic counting
 * each message once when an event is delivered again.
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { messagesEvents } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { startSystem, type Account } from '../harness.js';
import { verifyAction } from './events-verify.js';
import type { Msg } from './messages-fixtures.js';

t.test('stream statistics and subscription notices', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, bot } = sys.people;
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const ok = async (r: Promise<{ status: number; body: Msg }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const idOf = async (name: string) => (await ok(sys.client(hamlet).get('/get_stream_id', { stream: name }))).stream_id as number;
  /** Polls until `probe` returns something other than undefined. */
  const eventually = async <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => {
    for (let i = 0; i < 200; i++) {
      await sys.flushOutboxes();
      const v = await probe();
      if (v !== undefined) return v;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`never: ${what}`);
  };
  const botMessages = async (who: Account): Promise<string[]> => {
    const body = await ok(sys.client(who).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: false, narrow: [{ operator: 'is', operand: 'dm' }] }));
    return (body.messages as Msg[]).filter((m) => m.sender_full_name === 'Notification Bot').map((m) => m.content as string);
  };

  t.test('"X subscribed you to ...": to others only, not for streams just created, not to bots', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }, { name: 'Mantua' }] }));
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }, { name: 'Brand new' }], principals: [hamlet.user_id, othello.user_id, bot.user_id] }));
    const who = `@**King Hamlet|${hamlet.user_id}**`;
    t.same(await eventually(async () => ((await botMessages(othello)).length ? botMessages(othello) : undefined), 'othello told'), [`${who} subscribed you to the stream #**Verona**.`]);
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Mantua' }, { name: 'Brand new' }], principals: [iago.user_id] }));
    t.same(await eventually(async () => ((await botMessages(iago)).length ? botMessages(iago) : undefined), 'iago told'), [
      `${who} subscribed you to the following streams:\n\n* #**Brand new**\n* #**Mantua**`,
    ]);
    await sys.flushOutboxes();
    t.same(await botMessages(hamlet), [], 'nobody is told of subscribing themselves');
    t.same(await botMessages(bot), [], 'bots are not told');
    t.equal((await botMessages(othello)).length, 1, 'a subscription that already existed is not announced again');
  });

  t.test('first_message_id follows messages moved between streams', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Source' }, { name: 'Target' }] }));
    const source = await idOf('Source');
    const target = await idOf('Target');
    const send = async (content: string) => (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: source, topic: content, content }))).id as number;
    const first = await send('one');
    const second = await send('two');
    const firstOf = async (id: number) => (await ok(sys.client(hamlet).get(`/streams/${id}`))).stream.first_message_id as number | null;
    await eventually(async () => ((await firstOf(source)) === first ? true : undefined), 'source counts its first message');
    const move = (id: number) =>
      ok(sys.client(iago).patch(`/messages/${id}`, { stream_id: target, propagate_mode: 'change_one', send_notification_to_old_thread: false, send_notification_to_new_thread: false }));
    const params = { event_types: ['stream'], apply_markdown: true, client_gravatar: false };
    const events = await verifyAction(t, sys, sys.client(othello), () => move(first), { params, expect: ['stream/update'] });
    t.match(
      events.filter((e) => e.type === 'stream').map((e) => [e.stream_id, e.property, e.value]),
      [[target, 'first_message_id', first], [source, 'first_message_id', second]],
      "both streams' first_message_id, announced",
    );
    t.equal(await firstOf(target), first, 'target gets the moved message');
    t.equal(await firstOf(source), second, "the source's first message is the one left");
    await move(second);
    await eventually(async () => ((await firstOf(source)) === null ? true : undefined), 'an emptied stream has none');
    t.equal(await firstOf(target), first);
  });

  t.test("first_message_id follows the deletion of a stream's first message, announced to those who see the stream", async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Ledger' }], principals: [hamlet.user_id, othello.user_id] }));
    const ledger = await idOf('Ledger');
    const send = async (topic: string) => (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: ledger, topic, content: 'entry' }))).id as number;
    const first = await send('a');
    const second = await send('b');
    const third = await send('b');
    const firstOf = async () => (await ok(sys.client(hamlet).get(`/streams/${ledger}`))).stream.first_message_id as number | null;
    await eventually(async () => ((await firstOf()) === first ? true : undefined), 'the first message is counted');
    // othello left: the stream is among his `unsubscribed`, which the event keeps current too.
    await ok(sys.client(othello).delete('/users/me/subscriptions', { subscriptions: ['Ledger'] }));
    const params = { event_types: ['stream', 'subscription'], include_subscribers: true, apply_markdown: true, client_gravatar: false };
    const forget = (id: number) => () => ok(sys.client(iago).delete(`/messages/${id}`));
    // A later message going changes nothing: no event.
    await verifyAction(t, sys, sys.client(hamlet), forget(third), { params, expect: [] });
    t.equal(await firstOf(), first);
    const events = await verifyAction(t, sys, sys.client(hamlet), forget(first), { params, expect: ['stream/update'] });
    t.match(events, [{ type: 'stream', op: 'update', stream_id: ledger, name: 'Ledger', property: 'first_message_id', value: second }]);
    t.equal(await firstOf(), second, 'the oldest message left');
    // The last one goes (through delete_topic, as a batch): none left.
    await verifyAction(t, sys, sys.client(othello), () => ok(sys.client(iago).post(`/streams/${ledger}/delete_topic`, { topic_name: 'b' })), { params, expect: ['stream/update'] });
    t.equal(await firstOf(), null, 'an emptied stream has none');
    const later = await send('c');
    await eventually(async () => ((await firstOf()) === later ? true : undefined), 'a new message is the first again');
  });

  t.test('weekly traffic counts a redelivered message.sent once', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Busy' }] }));
    const busy = await idOf('Busy');
    const id = (await ok(sys.client(hamlet).post('/messages', { type: 'stream', to: busy, topic: 't', content: 'count me' }))).id as number;
    const count = async () => Number((await db.query<{ n: string }>('SELECT coalesce(sum(message_count), 0) AS n FROM subscriptions.stream_daily_traffic WHERE stream_id = $1', [busy])).rows[0]?.n);
    await eventually(async () => ((await count()) === 1 ? true : undefined), 'the message counted');
    const bus = sys.services.get('messages')![0]!.ctx.bus;
    const sent = { realm_id: sys.realmId, message_id: id, stream_id: busy, sender_id: hamlet.user_id, timestamp: Math.floor(Date.now() / 1000) };
    // The same event again under another message id: what a consumer sees when its acknowledgement was lost.
    await bus.publish(messagesEvents.messageSent, sent, { msgId: randomUUID() });
    // A sentinel behind it in the same stream: once it is counted, the redelivery was handled.
    await bus.publish(messagesEvents.messageSent, { ...sent, message_id: id + 1_000_000 }, { msgId: randomUUID() });
    t.equal(await eventually(async () => ((await count()) >= 2 ? count() : undefined), 'the sentinel counted'), 2, 'the redelivered message did not count twice');
  });
});

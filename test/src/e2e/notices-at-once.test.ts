/**
 * The notification bot's posts about a subscriptions change are there when the change is
 * answered, as on Zulip (which sends them in the change's transaction): the "stream events"
 * notices of PATCH /streams/{id}, "X subscribed you to ..." direct messages and the "new
 * streams" announcement. Each is posted once, although the outbox carries it too; and with
 * the messages service away the change is still answered, its posts following once it is back.
 *
 * Nothing here waits or flushes an outbox before reading: that is the point.
 */
import t from 'tap';
import { startSystem, type Account } from '../harness.js';
import type { Msg } from './messages-fixtures.js';

t.test("the notification bot's posts are there when the change is answered", async (t) => {
  const sys = await startSystem(t, { config: { newRealmStreams: true } });
  const { hamlet, othello, iago, desdemona } = sys.people;
  const ok = async (r: Promise<{ status: number; body: Msg }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const idOf = async (name: string) => (await ok(sys.client(hamlet).get('/get_stream_id', { stream: name }))).stream_id as number;
  const read = async (who: Account, narrow: unknown[], markdown = false): Promise<Msg[]> =>
    (await ok(sys.client(who).get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, apply_markdown: markdown, narrow }))).messages as Msg[];
  const byBot = (list: Msg[]) => list.filter((m) => m.sender_full_name === 'Notification Bot');
  const streamEvents = async (streamId: number) =>
    byBot(
      await read(hamlet, [
        { operator: 'stream', operand: streamId },
        { operator: 'topic', operand: 'stream events' },
      ]),
    ).map((m) => m.content as string);
  const told = async (who: Account) => byBot(await read(who, [{ operator: 'is', operand: 'dm' }])).map((m) => m.content as string);
  /** Every outbox relayed and its consumers given a moment: what was posted twice would show now. */
  const settle = async () => {
    await sys.flushOutboxes();
    await new Promise((r) => setTimeout(r, 300));
    await sys.flushOutboxes();
  };

  // Its notifications stream ("general") is set by an event of the users service: wait for it once.
  const general = await idOf('general');
  for (let i = 0; i < 100; i++) {
    if ((await ok(sys.client(hamlet).post('/register', { fetch_event_types: ['realm'] }))).realm_notifications_stream_id === general) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] }));
  const verona = await idOf('Verona');

  t.test('a stream change: its notice in "stream events", once', async (t) => {
    await ok(sys.client(desdemona).patch(`/streams/${verona}`, { description: 'Fair Verona' }));
    const now = await streamEvents(verona);
    t.equal(now.length, 1, 'the notice is there at once');
    t.match(now[0], /^@_\*\*Desdemona\|\d+\*\* changed the description for this stream\./);
    await settle();
    t.equal((await streamEvents(verona)).length, 1, 'the outbox did not post it again');
  });

  t.test('a subscription by someone else: the direct messages, once each', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [othello.user_id, desdemona.user_id] }));
    const text = `@**King Hamlet|${hamlet.user_id}** subscribed you to the stream #**Verona**.`;
    t.same(await told(othello), [text], 'there at once');
    t.same(await told(desdemona), [text], 'for each of them');
    await settle();
    t.equal((await told(othello)).length, 1, 'the outbox did not post it again');
    t.equal((await told(desdemona)).length, 1, 'nor the other');
  });

  t.test('a new stream announced: in "new streams", its mention a link, once', async (t) => {
    await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Battlements' }], announce: true }));
    const topic = [
      { operator: 'stream', operand: general },
      { operator: 'topic', operand: 'new streams' },
    ];
    const now = byBot(await read(iago, topic, true));
    t.equal(now.length, 1, 'there at once');
    t.match(now[0]?.content, /created a new stream <a class="stream" data-stream-id="\d+" href="[^"]*">#Battlements<\/a>/, 'the new stream is linked');
    await settle();
    t.equal(byBot(await read(iago, topic)).length, 1, 'the outbox did not post it again');
  });

  t.test('with the messages service away, the change is answered and its notice follows, once', async (t) => {
    await sys.stopService('messages');
    const started = Date.now();
    const r = await sys.client(desdemona).patch(`/streams/${verona}`, { description: 'Verona by night' });
    t.equal(r.status, 200, 'answered');
    t.ok(Date.now() - started < 10_000, 'without waiting for the messages service');
    await sys.startReplica('messages');
    let texts: string[] = [];
    for (let i = 0; i < 200 && texts.length < 2; i++) {
      await sys.flushOutboxes();
      texts = await streamEvents(verona).catch(() => []);
      if (texts.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    t.equal(texts.length, 2, 'the notice came from the outbox');
    t.match(texts[1], /Verona by night/);
    await settle();
    t.equal((await streamEvents(verona)).length, 2, 'once');
  });
});

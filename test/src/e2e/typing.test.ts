/**
 * POST /typing end to end: every error, and typing events reaching exactly the queues of the
 * people who would get the message (never stored), with the server's stop for a start that
 * was left to expire.
 */
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { TypingStartEvent, TypingStopEvent } from '@zc/shared/contracts/client-events';
import { startSystem } from '../harness.js';
import { QueuePoller, type ClientEvent } from './events-support.js';

// Short enough for a test to wait for the server's stop (Zulip's is 45 s).
process.env.ZC_TYPING_STARTED_EXPIRY_MS = '1500';

const quiet = (ms = 400) => new Promise((r) => setTimeout(r, ms));

t.test('typing notifications', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, polonius, desdemona } = sys.people;
  const h = sys.client(hamlet);
  const typing = (params: Record<string, unknown>) => h.post('/typing', params as Record<string, string>);
  const caps = { client_capabilities: { stream_typing_notifications: true }, event_types: ['typing'] };

  await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
  await sys.client(othello).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
  await sys.client(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secrets' }], invite_only: true });
  const verona = (await h.get('/get_stream_id', { stream: 'Verona' })).body.stream_id as number;
  const secrets = (await sys.client(iago).get('/get_stream_id', { stream: 'Secrets' })).body.stream_id as number;

  t.test('errors', async (t) => {
    const cases: Array<[string, Record<string, unknown>, string, string?]> = [
      ['bad op', { op: 'begin', to: [othello.user_id] }, 'Invalid op'],
      ['missing op', { to: [othello.user_id] }, "Missing 'op' argument", 'REQUEST_VARIABLE_MISSING'],
      ['bad type', { type: 'huddle', op: 'start', to: [othello.user_id] }, 'Invalid type'],
      ['empty to', { op: 'start', to: [] }, "Empty 'to' list"],
      ['missing to', { op: 'start' }, "Missing 'to' argument"],
      ['unknown user', { op: 'start', to: [othello.user_id, 999999] }, 'Invalid user ID 999999'],
      ['to of the wrong shape', { op: 'start', to: JSON.stringify({ a: 1 }) }, 'to is not a list of user ids'],
      ['stream without its id', { type: 'stream', op: 'start', topic: 'x' }, 'Missing channel ID'],
      ['stream without a topic', { type: 'stream', op: 'start', stream_id: verona }, 'Missing topic'],
      ['unknown stream', { type: 'stream', op: 'start', stream_id: 999999, topic: 'x' }, 'Invalid channel ID'],
      ['a private stream the user cannot see', { type: 'stream', op: 'start', stream_id: secrets, topic: 'x' }, 'Invalid channel ID'],
      ['several streams (old form)', { type: 'stream', op: 'start', to: [verona, secrets], topic: 'x' }, 'Cannot send to multiple channels'],
    ];
    for (const [name, params, msg, code] of cases) {
      const r = await typing(params);
      t.equal(r.status, 400, name);
      t.match(r.body, { result: 'error', msg, code: code ?? 'BAD_REQUEST' }, name);
    }
    const guest = await sys.client(polonius).post('/typing', { type: 'stream', op: 'start', stream_id: String(verona), topic: 'x' });
    t.match(guest.body, { msg: 'Invalid channel ID' }, 'a guest on a public stream they are not subscribed to');
  });

  t.test('a direct message notifies every recipient, the sender included, and nobody else', async (t) => {
    const [hq, oq, dq, iq] = await Promise.all([h, sys.client(othello), sys.client(desdemona), sys.client(iago)].map(async (c) => (await QueuePoller.register(c, caps)).poller));
    const r = await typing({ op: 'start', to: [othello.user_id, desdemona.user_id] });
    t.equal(r.status, 200, JSON.stringify(r.body));
    const expected = {
      type: 'typing',
      op: 'start',
      message_type: 'private',
      sender: { user_id: hamlet.user_id, email: hamlet.email },
      recipients: [
        { user_id: othello.user_id, email: othello.email },
        { user_id: desdemona.user_id, email: desdemona.email },
        { user_id: hamlet.user_id, email: hamlet.email },
      ],
    };
    for (const [who, q] of [['hamlet', hq], ['othello', oq], ['desdemona', dq]] as const) {
      const got = await (q as QueuePoller).collect(1, 5000);
      t.match(got, [expected], who);
      t.ok(Value.Check(TypingStartEvent, got[0]), `${who}: schema`);
    }
    await quiet();
    t.same(await (iq as QueuePoller).drain(), [], 'iago is not in the conversation');
    const stop = await typing({ op: 'stop', to: JSON.stringify([othello.user_id, desdemona.user_id]) });
    t.equal(stop.status, 200);
    const got = await (oq as QueuePoller).collect(1, 5000);
    t.match(got, [{ ...expected, op: 'stop' }]);
    t.ok(Value.Check(TypingStopEvent, got[0]));
    await quiet(2000);
    t.same(await (oq as QueuePoller).drain(), [], 'an explicit stop leaves nothing for the server to expire');
  });

  t.test('a stream topic notifies the other subscribers with the capability', async (t) => {
    const oq = (await QueuePoller.register(sys.client(othello), caps)).poller;
    const oldClient = (await QueuePoller.register(sys.client(othello), { event_types: ['typing'] })).poller;
    const hq = (await QueuePoller.register(h, caps)).poller;
    const iq = (await QueuePoller.register(sys.client(iago), caps)).poller;
    const r = await typing({ type: 'stream', op: 'start', stream_id: verona, topic: 'balcony' });
    t.equal(r.status, 200, JSON.stringify(r.body));
    const [event] = await oq.collect(1, 5000);
    t.match(event, { type: 'typing', op: 'start', message_type: 'stream', stream_id: verona, topic: 'balcony', sender: { user_id: hamlet.user_id, email: hamlet.email } });
    t.notOk('recipients' in (event as ClientEvent));
    t.ok(Value.Check(TypingStartEvent, event));
    await quiet();
    t.same(await hq.drain(), [], 'not the sender');
    t.same(await iq.drain(), [], 'not a non-subscriber');
    t.same(await oldClient.drain(), [], 'not a queue without stream_typing_notifications');
    // The form older clients use: the stream id as the only entry of `to`.
    await typing({ type: 'stream', op: 'stop', to: [verona], topic: 'balcony' });
    t.match(await oq.collect(1, 5000), [{ op: 'stop', stream_id: verona, topic: 'balcony' }]);
  });

  t.test('typing settings turned off refuse the notification, as Zulip does', async (t) => {
    const d = sys.client(desdemona);
    t.equal((await d.patch('/settings', { send_private_typing_notifications: false, send_stream_typing_notifications: false })).status, 200);
    const dm = await d.post('/typing', { op: 'start', to: [othello.user_id] });
    t.match(dm.body, { code: 'BAD_REQUEST', msg: 'User has disabled typing notifications for direct messages' });
    const st = await d.post('/typing', { type: 'stream', op: 'start', stream_id: verona, topic: 'x' });
    t.match(st.body, { code: 'BAD_REQUEST', msg: 'User has disabled typing notifications for channel messages' });
  });

  t.test('the server stops a start that is neither renewed nor stopped', async (t) => {
    const oq = (await QueuePoller.register(sys.client(othello), caps)).poller;
    await typing({ op: 'start', to: [othello.user_id] });
    t.match(await oq.collect(1, 5000), [{ op: 'start' }]);
    const started = Date.now();
    const stop = await oq.collect(1, 10_000);
    t.match(stop, [{ type: 'typing', op: 'stop', message_type: 'private', sender: { user_id: hamlet.user_id }, recipients: [{ user_id: othello.user_id }, { user_id: hamlet.user_id }] }]);
    t.ok(Date.now() - started >= 1000, 'not before the expiry');
  });
});

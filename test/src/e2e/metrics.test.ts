/**
 * The Prometheus series operations.md §2.3 asks for, as each service's /metrics registry
 * exposes them after real traffic: RED per bus subject (requests and consumed events),
 * outbox backlog and lag per schema, JetStream consumer lag, event-queue gauges and the
 * send-to-delivery latency histogram. Labels carry subjects and types, never ids.
 */
import t from 'tap';
import { startSystem } from '../harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The value of the first sample of `name` whose labels include every pair of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

t.test('bus RED, outbox, JetStream lag, event queues and delivery latency in /metrics', async (t) => {
  const sys = await startSystem(t);
  const hamlet = sys.client(sys.people.hamlet);
  const othello = sys.client(sys.people.othello);
  for (const c of [hamlet, othello]) t.equal((await c.call('POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'metered' }]) })).status, 200);
  await sys.flushOutboxes();
  const reg = await othello.call<{ queue_id: string; last_event_id: number }>('POST', '/register', { event_types: JSON.stringify(['message']) });
  t.equal(reg.status, 200);
  let sent = 0;
  for (let i = 0; i < 60 && sent < 3; i++) {
    const r = await hamlet.call('POST', '/messages', { type: 'stream', to: 'metered', topic: 'm', content: `n${i}` });
    if (r.status === 200) sent++;
    else await sleep(100);
  }
  t.equal(sent, 3, 'three messages sent');
  t.equal((await hamlet.call('POST', '/messages', { type: 'stream', to: 'no such stream', topic: 'm', content: 'x' })).status, 400);
  // othello's queue gets the messages: wait for them there.
  let got = 0;
  for (let i = 0; i < 50 && got < 3; i++) {
    const r = await othello.call<{ events: Array<{ type: string }> }>('GET', '/events', { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true });
    got = (r.body.events ?? []).filter((e) => e.type === 'message').length;
    if (got < 3) await sleep(100);
  }
  t.equal(got, 3, 'the receiver has the messages');
  await sys.flushOutboxes();

  const text = async (name: 'messages' | 'events' | 'subscriptions' | 'gateway') => {
    const list = sys.services.get(name) ?? [];
    return (await Promise.all(list.map((s) => s.ctx.metrics.metrics()))).join('\n');
  };
  const messages = await text('messages');
  t.ok((sample(messages, 'zc_bus_requests_total', { subject: 'messages.v1.send', outcome: 'ok' }) ?? 0) >= 3, 'sends served, by contract subject');
  t.equal(sample(messages, 'zc_bus_requests_total', { subject: 'messages.v1.send', outcome: 'client_error' }), 1, 'the refused send is a client error');
  t.ok((sample(messages, 'zc_bus_request_duration_seconds_count', { subject: 'messages.v1.send' }) ?? 0) >= 4, 'and timed');
  t.equal(sample(messages, 'zc_outbox_backlog', { schema: 'messages' }) !== undefined, true, 'outbox backlog per schema');
  t.ok((sample(messages, 'zc_outbox_lag_seconds', { schema: 'messages' }) ?? -1) >= 0, 'outbox lag per schema');

  const subscriptions = await text('subscriptions');
  t.ok((sample(subscriptions, 'zc_bus_events_total', { outcome: 'ok' }) ?? 0) > 0, 'consumed events counted');
  t.ok(sample(subscriptions, 'zc_jetstream_consumer_pending_messages') !== undefined, 'durable consumers report their lag');
  t.ok(sample(subscriptions, 'zc_jetstream_consumer_ack_pending_messages') !== undefined);

  const events = await text('events');
  t.ok((sample(events, 'zc_event_queues') ?? 0) >= 1, 'live event queues counted by the leader');
  t.ok(sample(events, 'zc_jetstream_consumer_pending_messages', { stream: `${sys.env.prefix}_events_inbox`.toUpperCase() }) !== undefined, 'the inbox backlog (the leader consumer lag)');
  t.ok((sample(events, 'zc_event_delivery_latency_seconds_count', { type: 'message' }) ?? 0) >= 3, 'send-to-delivery latency observed per message');
  t.ok(sample(events, 'zc_event_delivery_latency_seconds_bucket', { type: 'message', le: '+Inf' }) !== undefined);

  // The gateway holds the long-polls (it serves GET /events from the queues in Redis).
  const gateway = await text('gateway');
  t.ok(sample(gateway, 'zc_events_parked_polls') !== undefined, 'parked polls');

  const all = `${messages}\n${subscriptions}\n${events}\n${gateway}`;
  t.notMatch(all, new RegExp(`queue_id|"${reg.body.queue_id}"|user_id=`), 'no ids in labels');
});

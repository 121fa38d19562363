/**
 * A subscribe call whose subscription/add event would not fit in one NATS message, even
 * gzipped (750 streams with incompressible descriptions: about 1.1 MiB gzipped),
 * succeeds and reaches the client as several add events that together hold every stream,
 * in order; the subscriptions service's later events still arrive (nothing blocks its relay).
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { ApiClient } from '../client.js';
import { startSystem } from '../harness.js';
import { QueuePoller, type ClientEvent } from './events-support.js';

/** With descriptions of 1024 random characters (sent twice: raw and rendered), over 1.1 MiB gzipped. */
const STREAMS = 750;

t.test('subscribing to 750 streams at once', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona } = sys.people;
  const { poller } = await QueuePoller.register(sys.client(iago), { event_types: ['subscription'] });
  // A client polls as soon as it has registered; a queue never polled may hold only a
  // sixteenth of the byte budget (events service, UNPOLLED_BYTES_SHARE), which these events
  // exceed, so without this poll the test raced the subscriptions relay (and lost on a loaded CI).
  await poller.drain();

  const names = Array.from({ length: STREAMS }, (_, i) => `bulk ${String(i).padStart(4, '0')}`);
  const subscriptions = names.map((name) => ({ name, description: randomBytes(768).toString('base64').slice(0, 1024) }));
  // Another member creates the streams, fifty at a time; iago then joins all of them at once.
  for (let i = 0; i < STREAMS; i += 50) {
    const created = await sys.client(desdemona).post('/users/me/subscriptions', { subscriptions: subscriptions.slice(i, i + 50) });
    if (created.status !== 200) throw new Error(`creating streams: ${created.status} ${JSON.stringify(created.body)}`);
  }
  const r = await sys.client(iago).post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })) });
  t.equal(r.status, 200, r.status === 200 ? 'subscribed in one call' : `refused: ${JSON.stringify(r.body).slice(0, 200)}`);
  t.equal((r.body.subscribed as Record<string, string[]>)?.[iago.email]?.length, STREAMS);

  // A later event of the same service, after the big ones.
  const after = await sys.client(iago).post('/users/me/subscriptions/properties', {
    subscription_data: [{ stream_id: await streamId(sys.client(iago), names[0] as string), property: 'pin_to_top', value: true }],
  });
  t.equal(after.status, 200);

  const adds: ClientEvent[] = [];
  let updated = false;
  const until = Date.now() + 60_000;
  while (!updated && Date.now() < until) {
    for (const e of await poller.collect(1, Math.max(1, until - Date.now()))) {
      if (e.op === 'add') adds.push(e);
      if (e.op === 'update' && e.property === 'pin_to_top') updated = true;
    }
  }
  const added = adds.flatMap((e) => (e.subscriptions as Array<{ name: string; description: string }>).map((s) => s.name));
  t.ok(adds.length > 1, `several add events (${adds.length})`);
  t.same(added, names, 'every new stream once, in order');
  t.ok(updated, 'the later event arrived too');
  const descriptions = new Map(adds.flatMap((e) => (e.subscriptions as Array<{ name: string; description: string }>).map((s) => [s.name, s.description])));
  t.equal(descriptions.get(names[STREAMS - 1] as string), subscriptions[STREAMS - 1]?.description, 'descriptions intact');
});

async function streamId(c: ApiClient, name: string): Promise<number> {
  const r = await c.get('/get_stream_id', { stream: name });
  return Number(r.body.stream_id);
}

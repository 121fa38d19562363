/**
 * The gateway holds each parked poll. When its client leaves, the park ends there and in
 * Redis. When the gateway itself is lost (cut off from NATS, its clients' connections
 * dropped), its clients poll again through another gateway with the same last_event_id and
 * get every event sent meanwhile, once, in order.
 */
import t from 'tap';
import { Redis } from '@zc/shared/redis';
import { queueMetaKey } from '@zc/shared/event-queues';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

process.env.ZC_HEARTBEAT_MS = '30000';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const draft = (content: string) => ({ drafts: [{ type: '', to: [], topic: '', content }] });
const contents = (events: Array<Record<string, unknown>>) => events.filter((e) => e.type === 'drafts').map((e) => (e.drafts as Array<{ content: string }>)[0]?.content);

t.test('losing the gateway that holds a poll', async (t) => {
  const sys = await startSystem(t, { replicas: { gateway: 2 } });
  const { hamlet } = sys.people;
  const [gwA, gwB] = sys.gatewayUrls as [string, string];
  const [serviceA, serviceB] = sys.services.get('gateway') ?? [];
  const parkedOn = async (s: typeof serviceA) => (await s?.ctx.metrics.getSingleMetric('zc_events_parked_polls')?.get())?.values[0]?.value ?? 0;
  const until = async (probe: () => Promise<boolean>) => {
    for (let i = 0; i < 250 && !(await probe()); i++) await sleep(20);
    return probe();
  };
  const redis = new Redis(sys.env.infra.redisUrl);
  t.teardown(() => redis.disconnect());
  const parker = (queueId: string) => redis.hget(queueMetaKey(sys.env.prefix, queueId), 'parked_on');

  t.test('a client that leaves ends its park on the gateway and in Redis', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(hamlet, { baseUrl: gwA }), { event_types: ['drafts'] });
    const leaving = new AbortController();
    const polling = poller.poll({ signal: leaving.signal }).catch((e: unknown) => e);
    t.ok(await until(async () => (await parkedOn(serviceA)) === 1 && (await parker(poller.queueId)) !== ''), 'parked');
    leaving.abort();
    await polling;
    t.ok(await until(async () => (await parkedOn(serviceA)) === 0), 'no longer parked on the gateway');
    t.ok(await until(async () => (await parker(poller.queueId)) === ''), 'the park is released in Redis');
  });

  t.test('a gateway lost mid-park: its client polls again through another and loses nothing', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(hamlet, { baseUrl: gwB }), { event_types: ['drafts'] });
    await sys.client(hamlet).post('/drafts', draft('before'));
    t.same(contents(await poller.collect(1)), ['before']);
    const dropped = new AbortController();
    const polling = poller.poll({ signal: dropped.signal }).catch((e: unknown) => e);
    t.ok(await until(async () => (await parkedOn(serviceB)) === 1), 'parked on gateway B');
    // B is lost: it hears no wake and sends no supplant any more, and its client's connection drops.
    await serviceB?.ctx.bus.nc.close();
    dropped.abort();
    await polling;
    for (const c of ['one', 'two', 'three']) await sys.client(hamlet, { baseUrl: gwA }).post('/drafts', draft(c));
    const again = new QueuePoller(sys.client(hamlet, { baseUrl: gwA }), poller.queueId, poller.lastEventId);
    t.same(contents(await again.collect(3)), ['one', 'two', 'three'], 'through gateway A, with the same last_event_id: everything, in order');
    t.same(contents(await again.drain()), [], 'once');
  });
});

/**
 * A long-poll is held by the gateway, not by an events replica: the events leader dying (its
 * connection gone without a word, as after SIGKILL) leaves the parked poll alone, and the
 * same GET /events returns the next event once the other replica has taken over appending.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

process.env.ZC_HEARTBEAT_MS = '20000';
process.env.ZC_EVENTS_LEADER_LOCK_MS = '1500';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const draft = (content: string) => ({ drafts: [{ type: '', to: [], topic: '', content }] });
const contents = (events: Array<Record<string, unknown>>) => events.filter((e) => e.type === 'drafts').map((e) => (e.drafts as Array<{ content: string }>)[0]?.content);

t.test('a poll parked while the events leader dies', async (t) => {
  const sys = await startSystem(t, { replicas: { events: 2 } });
  const { hamlet } = sys.people;
  const replicas = sys.services.get('events') ?? [];
  const gauge = async (s: (typeof replicas)[number], name: string) => (await s.ctx.metrics.getSingleMetric(name)?.get())?.values[0]?.value ?? 0;
  const leaderIndex = async () => {
    for (let i = 0; i < 100; i++) {
      for (const [j, s] of replicas.entries()) if ((await gauge(s, 'zc_events_leader')) === 1) return j;
      await sleep(50);
    }
    return -1;
  };
  const gateway = (sys.services.get('gateway') ?? [])[0];

  const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['drafts'] });
  const started = Date.now();
  const parked = poller.poll();
  for (let i = 0; i < 100 && gateway && (await gauge(gateway, 'zc_events_parked_polls')) === 0; i++) await sleep(20);
  t.equal(gateway && (await gauge(gateway, 'zc_events_parked_polls')), 1, 'the poll parked on the gateway');
  const index = await leaderIndex();
  t.ok(index >= 0, 'one replica leads');
  // Killed: its NATS connection drops; it never appends or answers again.
  await replicas[index]?.ctx.bus.nc.close();
  await sys.client(hamlet).post('/drafts', draft('after the death'));

  const events = await parked;
  const took = Date.now() - started;
  t.same(contents(events), ['after the death'], 'the same GET /events returns the event the new leader appended');
  t.ok(took < 12_000, `within the leader's failover, not at the 20 s heartbeat (${took} ms)`);
  t.same(contents(await poller.drain()), [], 'and only once');
});

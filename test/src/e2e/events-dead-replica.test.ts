/**
 * A long-poll parked on an events replica that dies (its connection gone without answering,
 * as after SIGKILL) is answered within the heartbeat interval with `events: []`, and the
 * client's next poll, served by the surviving replica, gets every event, once.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

process.env.ZC_HEARTBEAT_MS = '3000';
process.env.ZC_EVENTS_LEADER_LOCK_MS = '1500';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const draft = (content: string) => ({ drafts: [{ type: '', to: [], topic: '', content }] });

t.test('a poll parked on a dead events replica', async (t) => {
  const sys = await startSystem(t, { replicas: { events: 2 } });
  const { hamlet } = sys.people;
  const replicas = sys.services.get('events') ?? [];
  const parkedOn = async () => {
    const counts = await Promise.all(replicas.map(async (s) => (await s.ctx.metrics.getSingleMetric('zc_events_parked_polls')?.get())?.values[0]?.value ?? 0));
    return counts.findIndex((n) => n > 0);
  };

  const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['drafts'] });
  const started = Date.now();
  const parked = sys.client(hamlet).get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
  let index = -1;
  for (let i = 0; i < 100 && index < 0; i++) {
    await sleep(20);
    index = await parkedOn();
  }
  t.ok(index >= 0, 'the poll parked on one replica');
  // The replica says it holds the poll once it has stayed parked 100–200 ms (Bus acks); one
  // killed before that is never heard of by the gateway, which asks another after a second.
  await sleep(300);
  const victim = replicas[index];
  // Killed: its NATS connection drops, no reply is ever sent.
  await victim?.ctx.bus.nc.close();
  const r = await parked;
  const took = Date.now() - started;
  t.equal(r.status, 200);
  t.same(r.body, { result: 'success', msg: '', events: [], queue_id: poller.queueId }, 'answered with no events');
  // The gateway's window is the heartbeat plus a second; the rest is slack for a loaded machine.
  t.ok(took < 3000 + 2500, `within the heartbeat interval plus a second (${took} ms)`);
  t.ok(took >= 3000, `not before the window (${took} ms): the gateway, not an error, answered`);

  await sys.client(hamlet).post('/drafts', draft('after the death'));
  const events = await poller.collect(1, 10_000);
  t.same(
    events.filter((e) => e.type === 'drafts').map((e) => (e.drafts as Array<{ content: string }>)[0]?.content),
    ['after the death'],
    'the next poll, on the surviving replica, gets the event once',
  );
});

/**
 * Polls held by an events replica that stops answering reach a live replica within seconds,
 * not after the heartbeat (here 30 s): the gateway hears every replica beat each second and
 * asks again when the one holding its poll falls silent (killed, paused, cut off), or when
 * the replica NATS routed the poll to never says it took it (a paused process the server
 * has not cut off yet). The client sees one answer with its events, once.
 */
import t from 'tap';
import { Bus } from '@zc/shared/bus';
import { eventsAlive, eventsRpc } from '@zc/shared/contracts';
import { createLogger } from '@zc/shared/logging';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

const HEARTBEAT_MS = 30_000;
process.env.ZC_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ZC_EVENTS_LEADER_LOCK_MS = '1500';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const draft = (content: string) => ({ drafts: [{ type: '', to: [], topic: '', content }] });
const contents = (events: Array<Record<string, unknown>>) => events.filter((e) => e.type === 'drafts').map((e) => (e.drafts as Array<{ content: string }>)[0]?.content);

t.test('a poll held by a replica that falls silent is answered by a live one', async (t) => {
  const sys = await startSystem(t, { replicas: { events: 2 } });
  const { hamlet } = sys.people;
  const replicas = sys.services.get('events') ?? [];
  const parkedOn = async () => {
    const counts = await Promise.all(replicas.map(async (s) => (await s.ctx.metrics.getSingleMetric('zc_events_parked_polls')?.get())?.values[0]?.value ?? 0));
    return counts.findIndex((n) => n > 0);
  };

  const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['drafts'] });
  const started = Date.now();
  const polling = poller.poll();
  let index = -1;
  for (let i = 0; i < 100 && index < 0; i++) {
    await sleep(20);
    index = await parkedOn();
  }
  t.ok(index >= 0, 'the poll parked on one replica');
  // Cut off: no reply, no more beats (its leadership, if it led, passes to the other).
  await replicas[index]?.ctx.bus.nc.close();
  await sys.client(hamlet).post('/drafts', draft('while the holder is silent'));

  const events = await polling;
  const took = Date.now() - started;
  t.same(contents(events), ['while the holder is silent'], 'the same GET /events returns the event');
  t.ok(took < 12_000, `within seconds, not the ${HEARTBEAT_MS / 1000} s heartbeat (${took} ms)`);
  t.same(contents(await poller.drain()), [], 'and only once');
});

t.test('a replica that never takes its polls: they go again, and once it is silent, elsewhere at once', async (t) => {
  const sys = await startSystem(t, { replicas: { events: 1 } });
  const { hamlet } = sys.people;
  // A member of the events queue group, reachable by name and beating like a replica, that
  // receives polls and never answers: a process paused a moment ago, which the NATS server
  // still routes to.
  const hole = await Bus.connect({ url: sys.env.infra.natsUrl, prefix: sys.env.prefix, name: 'silent-events-replica', log: createLogger({ service: 'test', level: 'silent' }) });
  let swallowed = 0;
  const swallow = () => void swallowed++;
  const subject = hole.subject(eventsRpc.get.subject);
  hole.nc.subscribe(subject, { queue: 'events', callback: swallow });
  hole.nc.subscribe(`${subject}.hole`, { callback: swallow });
  const beating = setInterval(() => hole.broadcast(eventsAlive, { replica: 'hole' }), 1000);
  hole.broadcast(eventsAlive, { replica: 'hole' });
  t.teardown(() => {
    clearInterval(beating);
    return hole.nc.close();
  });
  await hole.nc.flush();
  await sleep(1500);

  const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['drafts'] });
  await sys.client(hamlet).post('/drafts', draft('waiting'));
  // Events wait in the queue: a poll the real replica takes answers at once; one the silent
  // member got goes again after a second. Each poll re-reads the same event (none acknowledged).
  const lastEventId = poller.lastEventId;
  const pollOnce = async (label: string) => {
    const started = Date.now();
    const swallowedBefore = swallowed;
    poller.lastEventId = lastEventId;
    const events = await poller.poll();
    const took = Date.now() - started;
    t.same(contents(events), ['waiting'], `${label}: the event`);
    // A second per poll the silent member swallowed, then the live replica answers.
    t.ok(took < 1_000 * (swallowed - swallowedBefore) + 1_500, `${label}: answered in ${took} ms after ${swallowed - swallowedBefore} swallowed`);
  };
  let polls = 0;
  for (; polls < 40 && swallowed < 2; polls++) await pollOnce(`poll ${polls}`);
  t.ok(swallowed >= 2, `the silent member swallowed ${swallowed} requests over ${polls} polls, each asked again`);

  // It stops beating too (paused for good): within three beats it gets no more polls.
  clearInterval(beating);
  await sleep(3000);
  const before = swallowed;
  for (let i = 0; i < 10; i++) await pollOnce(`silent ${i}`);
  t.equal(swallowed, before, 'no poll was sent to it any more');
});

/**
 * GET /events as the gateways serve it (@zc/shared/event-queues' PollHub), on queues this
 * service creates and appends to, against a real Redis and NATS: two hubs stand for two
 * gateways, the QueueWaker for the appender's wake broadcast. Answers at once or parked,
 * woken by a wake, supplanted by a newer poll on the same or the other gateway, ended by a
 * heartbeat, by the client leaving (the park released in Redis) or by a gateway's stop, and
 * the errors a client sees.
 */
import t from 'tap';
import type * as Tap from 'tap';
import { Bus } from '@zc/shared/bus';
import { PollHub, PollStore, type PollAnswer, type PollReply, type PollRequest } from '@zc/shared/event-queues';
import { createLogger } from '@zc/shared/logging';
import { Redis } from '@zc/shared/redis';
import { testEnv } from '@zc/shared/testing';
import { QueueWaker } from '../../src/delivery/wake.js';
import { QueueStore, type NewQueue } from '../../src/store/queue-store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const events = (r: PollAnswer) => JSON.parse((r as PollReply).events_json) as Array<{ id: number; type: string; n?: number }>;

t.test('poll hubs on two gateways', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'poll-hub-test', level: 'silent' });
  const redis = new Redis(env.infra.redisUrl);
  const buses = await Promise.all(['events', 'gw-a', 'gw-b'].map((name) => Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name, log })));
  const [eventsBus, busA, busB] = buses as [Bus, Bus, Bus];
  const store = new QueueStore(redis, env.prefix);
  const waker = new QueueWaker(eventsBus);
  const hubOn = (bus: Bus, heartbeatMs = 60_000) => {
    const hub = new PollHub({ bus, store: new PollStore(redis, env.prefix), log, heartbeatMs: () => heartbeatMs });
    hub.start();
    t.teardown(() => hub.stop());
    return hub;
  };
  const a = hubOn(busA);
  const b = hubOn(busB);
  t.teardown(async () => {
    for (const bus of buses) await bus.close();
    redis.disconnect();
  });
  await Promise.all(buses.map((bus) => bus.nc.flush()));

  const registry = await store.ensureRegistry('e1', 0);
  let n = 0;
  const newQueue = async (over: Partial<NewQueue> = {}): Promise<string> => {
    const queueId = `q${++n}`;
    await store.create({ queueId, userId: 10, realmId: 1, eventTypes: null, narrow: [], applyMarkdown: true, clientGravatar: false, allPublicStreams: false, capabilities: {}, lifespanMs: 60_000, epoch: registry.epoch, ...over }, Date.now());
    await store.finishRegister(queueId, {});
    return queueId;
  };
  let seq = 0;
  /** What the appender does: append, then wake every gateway. */
  const deliver = async (queueId: string, count = 1) => {
    const batch = Array.from({ length: count }, () => ({ seq: ++seq, origin: '', txid: '', json: JSON.stringify({ type: 'drafts', n: seq }) }));
    await store.append(new Map([[queueId, batch]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    waker.broadcastWake([queueId]);
  };
  const ask = (queueId: string, lastEventId = -1, over: Partial<PollRequest> = {}): PollRequest => ({ queueId, userId: 10, guest: false, lastEventId, dontBlock: false, ...over });
  const parkedOn = async (queueId: string) => redis.hget(store.metaKey(queueId), 'parked_on');
  const untilParked = async (queueId: string, hub: PollHub) => {
    for (let i = 0; i < 200 && (await parkedOn(queueId)) !== hub.id; i++) await sleep(10);
  };

  t.test('events waiting: answered at once, without queue_id; dont_block with none: []', async (t) => {
    const q = await newQueue();
    t.same(await a.getEvents(ask(q, -1, { dontBlock: true })), { events_json: '[]' });
    await deliver(q, 2);
    const r = await a.getEvents(ask(q));
    t.same(events(r).map((e) => e.id), [0, 1]);
    t.equal((r as PollReply).queue_id, undefined);
    t.same(events(await b.getEvents(ask(q, 0, { dontBlock: true }))).map((e) => e.id), [1], 'acknowledged up to last_event_id, on any gateway');
  });

  t.test('a parked poll answers when the wake comes, with its queue id', async (t) => {
    const q = await newQueue();
    const parked = a.getEvents(ask(q));
    await untilParked(q, a);
    t.equal(a.parkedCount, 1);
    await deliver(q);
    const r = await parked;
    t.same(events(r).map((e) => [e.id, e.type]), [[0, 'drafts']]);
    t.equal((r as PollReply).queue_id, q);
    t.equal(await parkedOn(q), '', 'a poll ending with events clears its park');
    t.equal(a.parkedCount, 0);
  });

  t.test('a wake carrying the appended events answers a parked poll from them, without reading the queue', async (t) => {
    const q = await newQueue();
    const first = a.getEvents(ask(q));
    await untilParked(q, a);
    const batch = [1, 2].map((k) => ({ seq: ++seq, origin: '', txid: '', json: JSON.stringify({ type: 'drafts', n: k }) }));
    await store.append(new Map([[q, batch]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    // Text other than the queue's shows where the answer came from.
    waker.broadcastWake([q], { json: ['{"type":"drafts","n":1,"from":"wake"}', '{"type":"drafts","n":2,"from":"wake"}'], queues: { [q]: [0, 0, 1] } });
    const r = await first;
    t.same(events(r), [{ id: 0, type: 'drafts', n: 1, from: 'wake' }, { id: 1, type: 'drafts', n: 2, from: 'wake' }]);
    t.equal((r as PollReply).queue_id, q);
    for (let i = 0; i < 200 && (await parkedOn(q)) !== ''; i++) await sleep(10);
    t.equal(await parkedOn(q), '', 'the park is released as a re-read would have');

    // Events that do not follow last_event_id (a wake was lost in between): the queue is read.
    const second = a.getEvents(ask(q, 1));
    await untilParked(q, a);
    await store.append(new Map([[q, [{ seq: ++seq, origin: '', txid: '', json: '{"type":"drafts","n":3}' }, { seq: ++seq, origin: '', txid: '', json: '{"type":"drafts","n":4}' }]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    waker.broadcastWake([q], { json: ['{"type":"drafts","n":4,"from":"wake"}'], queues: { [q]: [3, 0] } });
    t.same(events(await second), [{ id: 2, type: 'drafts', n: 3 }, { id: 3, type: 'drafts', n: 4 }], 'both, from Redis');
  });

  /** A hub whose store counts the scripts it runs: polls (by mode) and releases (by generation). */
  const countingHub = (t: Tap.Test, tailFreshMs?: number) => {
    const released: number[] = [];
    const polled: string[] = [];
    class CountingStore extends PollStore {
      override async poll(...args: Parameters<PollStore['poll']>): ReturnType<PollStore['poll']> {
        polled.push(args[3].mode);
        return super.poll(...args);
      }
      override async release(queueId: string, nowMs: number, generation: number): Promise<number> {
        released.push(generation);
        return super.release(queueId, nowMs, generation);
      }
    }
    const hub = new PollHub({ bus: busA, store: new CountingStore(redis, env.prefix), log, heartbeatMs: () => 60_000, ...(tailFreshMs !== undefined ? { tailFreshMs } : {}) });
    hub.start();
    t.teardown(() => hub.stop());
    return { hub, released, polled };
  };
  const draft = (n: number) => JSON.stringify({ type: 'drafts', n });
  /**
   * Until gateway A has taken in what the events bus published so far: the server has the
   * publish once the events connection's flush returns, and sends A's PONG after the message.
   */
  const heardByA = async () => {
    await eventsBus.nc.flush();
    await busA.nc.flush();
    await sleep(5);
  };
  /** Appends one event and (unless told not to) wakes with it, as the appender does. */
  const appendAndWake = async (q: string, id: number, wake: 'with events' | 'bare' | 'none' = 'with events') => {
    const json = draft(id);
    await store.append(new Map([[q, [{ seq: ++seq, origin: '', txid: '', json }]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    if (wake === 'with events') waker.broadcastWake([q], { json: [json], queues: { [q]: [id, 0] } });
    if (wake === 'bare') waker.broadcastWake([q]);
  };

  /** A counting hub and a queue whose first poll parked in Redis and was answered by the wake of event 0. */
  const wokenOnce = async (t: Tap.Test, tailFreshMs?: number) => {
    const c = countingHub(t, tailFreshMs);
    const q = await newQueue();
    const first = c.hub.getEvents(ask(q));
    await untilParked(q, c.hub);
    await appendAndWake(q, 0);
    return { ...c, q, first: await first };
  };

  t.test("a busy client's polls: parked here without Redis, the release held and superseded; waiting long, parked in Redis", async (t) => {
    const { hub, released, polled, q, first } = await wokenOnce(t);
    const gen = async () => Number(await redis.hget(store.metaKey(q), 'poll_gen'));
    t.same(events(first).map((e) => e.id), [0], 'answered from the wake');
    t.same(polled, ['park'], 'one script so far');

    // The client polls again at once: nothing waits, and the hub knows it (Redis said so a moment ago).
    const second = hub.getEvents(ask(q, 0));
    await sleep(50);
    t.same(polled, ['park'], 'parked here, without Redis');
    t.equal(await gen(), 1, 'no new park generation');
    await appendAndWake(q, 1);
    const r2 = await second;
    t.same(events(r2).map((e) => e.id), [1], 'answered from the wake');
    t.equal((r2 as PollReply).queue_id, q);
    t.same(released, [], 'the held release was superseded by the newer one, not sent');

    // An event whose wake never comes (its appender died): the poll parked here goes to Redis after a while.
    const third = hub.getEvents(ask(q, 1));
    await sleep(50);
    await appendAndWake(q, 2, 'none');
    const startedAt = Date.now();
    const r3 = await third;
    t.same(events(r3).map((e) => e.id), [2], 'found in Redis');
    t.equal((r3 as PollReply).queue_id, q, 'with its queue id: it waited');
    t.ok(Date.now() - startedAt < 1500, 'within about a second');
    t.same(polled, ['park', 'park'], 'one more script');
    t.same(released, [1], 'the held release went with that read, which did not park');

    // No next poll: nothing is held any more, and the queue is as an idle one.
    for (let i = 0; i < 200 && (await parkedOn(q)) !== ''; i++) await sleep(10);
    t.equal(await parkedOn(q), '', 'nobody is parked on the queue');
  });

  t.test('events the wakes brought answer a poll from memory; a bare wake, a stale check or another user send it to Redis', async (t) => {
    // Its steps must each take less than the tail's freshness window, which is 200 ms in
    // service; 2 s here, so that a loaded machine cannot send a step to Redis by slowness.
    const { hub, polled, q } = await wokenOnce(t, 2_000);
    // Two events arrive before the client's next poll.
    await appendAndWake(q, 1);
    await appendAndWake(q, 2);
    await heardByA();
    t.same(events(await hub.getEvents(ask(q, 0))).map((e) => e.id), [1, 2], 'both, from what the wakes brought');
    t.same(polled, ['park'], 'without Redis');

    // A wake without the queue's events: what follows is unknown here.
    await appendAndWake(q, 3, 'bare');
    await heardByA();
    t.same(events(await hub.getEvents(ask(q, 2))).map((e) => e.id), [3], 'read from Redis');
    t.same(polled, ['park', 'park']);

    // Redis last answered longer ago than the tail's freshness window.
    await appendAndWake(q, 4);
    await sleep(2_100);
    t.same(events(await hub.getEvents(ask(q, 3))).map((e) => e.id), [4]);
    t.same(polled, ['park', 'park', 'park'], 'read from Redis');

    // Somebody else's poll of the queue is Redis's to refuse.
    await appendAndWake(q, 5);
    await heardByA();
    await t.rejects(hub.getEvents(ask(q, 4, { userId: 11 })), { code: 'BAD_EVENT_QUEUE_ID' });
    t.same(polled, ['park', 'park', 'park', 'park']);

    // Its owner's next poll reads Redis (the failure dropped what was known), and so does one after forget().
    t.same(events(await hub.getEvents(ask(q, 4))).map((e) => e.id), [5]);
    t.equal(polled.length, 5);
    await appendAndWake(q, 6);
    await heardByA();
    hub.forget(q);
    t.same(events(await hub.getEvents(ask(q, 5))).map((e) => e.id), [6]);
    t.equal(polled.length, 6, 'forgotten: read from Redis');

    // A wake that comes after the read which returned its event, then the next one: known ids are skipped.
    await appendAndWake(q, 7, 'none');
    t.same(events(await hub.getEvents(ask(q, 6))).map((e) => e.id), [7], 'read from Redis (no wake yet)');
    t.equal(polled.length, 7);
    await appendAndWake(q, 8, 'none');
    waker.broadcastWake([q], { json: [draft(7), draft(8)], queues: { [q]: [7, 0, 1] } });
    await heardByA();
    t.same(events(await hub.getEvents(ask(q, 7))).map((e) => [e.id, e.n]), [[8, 8]], 'the late wake told of 8');
    t.equal(polled.length, 7, 'without Redis');
  });

  t.test("a poll parked here is supplanted by a newer poll on another gateway, as its park in Redis would be", async (t) => {
    const { hub, polled, q } = await wokenOnce(t);
    const here = hub.getEvents(ask(q, 0));
    await sleep(30);
    t.same(polled, ['park']);
    const elsewhere = b.getEvents(ask(q, 0));
    t.same(await here, { events_json: '[]', queue_id: q }, 'ended with no events');
    await untilParked(q, b);
    await appendAndWake(q, 1);
    t.same(events(await elsewhere).map((e) => e.id), [1]);
  });

  t.test('traced (ZC_DELIVERY_TRACE): a woken poll answers when the wake was sent, heard and answered', async (t) => {
    const traced = new PollHub({ bus: busA, store: new PollStore(redis, env.prefix), log, heartbeatMs: () => 60_000, trace: true });
    traced.start();
    t.teardown(() => traced.stop());
    const q = await newQueue();
    const parked = traced.getEvents(ask(q));
    await untilParked(q, traced);
    await store.append(new Map([[q, [{ seq: ++seq, origin: '', txid: '', json: '{"type":"drafts"}' }]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    const sentAt = performance.timeOrigin + performance.now();
    waker.broadcastWake([q], undefined, sentAt);
    const r = (await parked) as PollReply;
    const [sent, heard, ready] = (r.trace ?? '').split(',').map(Number);
    t.equal(sent, sentAt);
    t.ok(heard !== undefined && ready !== undefined && sentAt <= heard && heard <= ready, 'heard after it was sent, answered after that');
    t.same(events(r).map((e) => e.id), [0]);
    const untraced = a.getEvents(ask(q, 0));
    await untilParked(q, a);
    await deliver(q);
    t.equal(((await untraced) as PollReply).trace, undefined, 'a hub without trace adds none');
  });

  t.test('a newer poll ends the older one, on the same gateway and on the other', async (t) => {
    const q = await newQueue();
    const first = a.getEvents(ask(q));
    const second = a.getEvents(ask(q));
    t.same(await first, { events_json: '[]', queue_id: q }, 'the older poll on this gateway');
    await untilParked(q, a);
    const third = b.getEvents(ask(q));
    t.same(await second, { events_json: '[]', queue_id: q }, 'the older poll on the other gateway, by broadcast');
    await untilParked(q, b);
    await deliver(q);
    t.same(events(await third).map((e) => e.id), [0], 'the newest gets the event');
  });

  t.test('a client that leaves ends its park, here and in Redis', async (t) => {
    const q = await newQueue();
    let leave = () => {};
    const parked = a.getEvents(ask(q), (l) => (leave = l));
    await untilParked(q, a);
    leave();
    t.same(await parked, { events_json: '[]', queue_id: q });
    t.equal(a.parkedCount, 0);
    for (let i = 0; i < 100 && (await parkedOn(q)) !== ''; i++) await sleep(10);
    t.equal(await parkedOn(q), '', 'released');
    await deliver(q);
    t.same(events(await b.getEvents(ask(q))).map((e) => e.id), [0], 'the next poll gets what came meanwhile');
  });

  t.test('a client that leaves before Redis parked its poll: the park is undone when it lands', async (t) => {
    const q = await newQueue();
    const parked = a.getEvents(ask(q), (leave) => leave());
    t.same(await parked, { events_json: '[]', queue_id: q });
    for (let i = 0; i < 100 && (await redis.hget(store.metaKey(q), 'poll_gen')) !== '1'; i++) await sleep(10);
    await sleep(50);
    t.equal(await parkedOn(q), '', 'no parker left behind');
  });

  t.test('the heartbeat ends a quiet poll with a heartbeat event that uses an id', async (t) => {
    const quick = hubOn(busA, 200);
    const q = await newQueue();
    const started = Date.now();
    const r = await quick.getEvents(ask(q));
    t.ok(Date.now() - started >= 190, 'not before the heartbeat delay');
    t.same(events(r), [{ id: 0, type: 'heartbeat' }]);
    t.equal((r as PollReply).queue_id, q);
    await deliver(q);
    t.same(events(await a.getEvents(ask(q, 0))).map((e) => e.id), [1]);
  });

  t.test("a gateway's stop answers its parked polls at once and releases them; later polls do not park", async (t) => {
    const stopping = hubOn(busB);
    const q = await newQueue();
    const parked = stopping.getEvents(ask(q));
    await untilParked(q, stopping);
    stopping.stop();
    t.same(await parked, { events_json: '[]', queue_id: q });
    for (let i = 0; i < 100 && (await parkedOn(q)) !== ''; i++) await sleep(10);
    t.equal(await parkedOn(q), '', 'released');
    t.same(await stopping.getEvents(ask(q)), { events_json: '[]', queue_id: q }, 'a poll during shutdown answers at once');
  });

  t.test('a poll expecting keys to hold values does nothing when one does not', async (t) => {
    const q = await newQueue();
    await deliver(q, 2);
    const token = `${env.prefix}:test-token`;
    await redis.set(token, 'now');
    const stale = { keys: [token, `${env.prefix}:absent`], values: ['before', ''] };
    t.equal(await a.getEvents(ask(q, 0, { dontBlock: true, expect: stale })), 'unexpected');
    t.equal(await a.getEvents(ask(q, 0, { expect: stale })), 'unexpected', 'nor parks');
    t.equal(a.parkedCount, 0);
    t.same(events(await a.getEvents(ask(q, -1, { dontBlock: true }))).map((e) => e.id), [0, 1], 'nothing was acknowledged');
    const current = { keys: [token, `${env.prefix}:absent`], values: ['now', ''] };
    t.same(events(await a.getEvents(ask(q, 0, { expect: current }))).map((e) => e.id), [1], 'as expected: polled');
  });

  t.test('errors: unknown, deleted while parked, pruned, missing, another epoch, a guest', async (t) => {
    const badQueue = (id: string) => ({ code: 'BAD_EVENT_QUEUE_ID', message: `Bad event queue ID: ${id}`, httpStatus: 400, data: { queue_id: id } });
    await t.rejects(a.getEvents(ask('nope')), badQueue('nope'));
    await t.rejects(a.getEvents(ask('nope', -1, { dontBlock: true })), badQueue('nope'));

    const q = await newQueue();
    await t.rejects(a.getEvents(ask(q, -1, { userId: 11 })), badQueue(q), "another user's queue");
    const parked = a.getEvents(ask(q));
    await untilParked(q, a);
    t.ok(await store.delete(q, 10));
    waker.broadcastWake([q]);
    await t.rejects(parked, badQueue(q), 'DELETE /events ends the parked poll');

    const r = await newQueue();
    await deliver(r, 3);
    await a.getEvents(ask(r, 1, { dontBlock: true }));
    await t.rejects(a.getEvents(ask(r, 0)), { code: 'BAD_REQUEST', message: 'An event newer than 1 has already been pruned!', httpStatus: 400 });
    await t.rejects(a.getEvents(ask(r, 9)), { code: 'BAD_REQUEST', message: 'Event 9 was not in this queue', httpStatus: 400 });

    const old = await newQueue({ epoch: 'an-older-dataset' });
    await t.rejects(a.getEvents(ask(old)), badQueue(old), 'a queue of another registry epoch is lost');

    const everything = await newQueue({ allPublicStreams: true });
    await t.rejects(a.getEvents(ask(everything, -1, { guest: true })), badQueue(everything), 'a guest may not poll an all_public_streams queue');
  });
});

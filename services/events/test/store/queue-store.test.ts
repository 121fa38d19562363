/**
 * The queue scripts against a real Redis, the events service's (register, append) and the
 * gateway's (poll, park, release, heartbeat) on the same queues: ids, acknowledgement rules,
 * snapshot filtering at and after /register, duplicate suppression by inbox seq, overflow,
 * and lost keys.
 */
import t from 'tap';
import { Redis } from '@zc/shared/redis';
import { testEnv } from '@zc/shared/testing';
import { PollStore } from '@zc/shared/event-queues';
import { QueueStore, type NewQueue, type QueuedEvent } from '../../src/store/queue-store.js';

const ev = (seq: number, txid: number | '', origin = 'drafts', body: Record<string, unknown> = { type: 'drafts', n: seq }): QueuedEvent => ({
  seq,
  origin: txid === '' ? '' : origin,
  txid: String(txid),
  json: JSON.stringify(body),
});

t.test('queue store', async (t) => {
  const env = await testEnv(t);
  const redis = new Redis(env.infra.redisUrl);
  t.teardown(() => redis.disconnect());
  const store = new QueueStore(redis, env.prefix);
  // The gateway's side of the same queues (GET /events).
  const polls = new PollStore(redis, env.prefix);
  let n = 0;
  const newQueue = async (over: Partial<NewQueue> = {}): Promise<string> => {
    const queueId = `q${++n}`;
    t.ok(
      await store.create(
        { queueId, userId: 10, realmId: 1, eventTypes: null, narrow: [], applyMarkdown: true, clientGravatar: false, allPublicStreams: false, capabilities: {}, lifespanMs: 60_000, epoch: 'e1', ...over },
        Date.now(),
      ),
    );
    return queueId;
  };
  const append = async (queueId: string, events: QueuedEvent[], max = 100, term = 1, maxBytes = 1 << 20) =>
    (await store.append(new Map([[queueId, events]]), { maxEvents: max, maxBytes }, term)).get(queueId);
  const ids = async (queueId: string, after = -1) => {
    const r = await polls.poll(queueId, 10, after, { mode: 'wake', max: 100 });
    return r.status === 'ok' ? r.events.map((e) => [e.id, JSON.parse(e.json).n]) : r.status;
  };

  t.test('events get growing ids from 0; a seq already applied is skipped', async (t) => {
    const q = await newQueue();
    t.equal(await store.finishRegister(q, {}), -1, 'nothing queued: last_event_id -1');
    t.equal(await append(q, [ev(5, ''), ev(6, '')]), 2);
    t.equal(await append(q, [ev(6, ''), ev(7, '')]), 1, 'seq 6 again (a redelivery) is skipped');
    t.same(await ids(q), [[0, 5], [1, 6], [2, 7]]);
    t.equal(await store.create({ queueId: q, userId: 1, realmId: 1, eventTypes: null, narrow: [], applyMarkdown: true, clientGravatar: false, allPublicStreams: false, capabilities: {}, lifespanMs: 1000, epoch: 'e1' }, 0), false, 'an id is never reused');
  });

  t.test('register drops the queued events its snapshots hold, and later ones too', async (t) => {
    const q = await newQueue();
    // Snapshot 10:14:12 holds transactions below 10, and 10, 11, 13; not 12 (running) nor 14+.
    await append(q, [ev(1, 9), ev(2, 12), ev(3, 11), ev(4, 14), ev(5, 3, 'users'), ev(6, '')]);
    const last = await store.finishRegister(q, { drafts: '10:14:12' });
    t.equal(last, 0, 'last_event_id is just below the first event the state lacks');
    t.same(await ids(q), [[1, 2], [3, 4], [4, 5], [5, 6]], 'txids 9 and 11 were in the state; other origins and plain events stay');
    t.equal(await append(q, [ev(7, 8), ev(8, 12), ev(9, 20)]), 2, 'a late event the snapshot holds is dropped on arrival');
    t.same((await ids(q, 5)), [[6, 8], [7, 9]]);
    const all = await polls.poll(q, 10, last as number, { mode: 'ack', max: 100 });
    t.equal(all.status, 'ok', 'acknowledging last_event_id is fine');
  });

  t.test('acknowledging follows Zulip', async (t) => {
    const q = await newQueue();
    await store.finishRegister(q, {});
    await append(q, [ev(1, ''), ev(2, ''), ev(3, '')]);
    t.same(await polls.poll(q, 10, 1, { mode: 'ack', max: 100 }), { status: 'ok', epoch: 'e1', events: [{ id: 2, json: ev(3, '').json }] });
    t.same(await polls.poll(q, 10, 0, { mode: 'ack', max: 100 }), { status: 'pruned', id: 1 });
    t.same(await polls.poll(q, 10, 9, { mode: 'ack', max: 100 }), { status: 'missing', id: 9 });
    t.same(await polls.poll(q, 11, 1, { mode: 'ack', max: 100 }), { status: 'gone' }, "another user's queue");
    t.same(await polls.poll(q, 10, 1, { mode: 'ack', max: 1 }), { status: 'ok', epoch: 'e1', events: [{ id: 2, json: ev(3, '').json }] }, 'the same ack again is fine');
    t.equal(await polls.heartbeat(q), 3, 'a heartbeat uses an id');
  });

  t.test('overflow drops the queue', async (t) => {
    const q = await newQueue();
    await store.finishRegister(q, {});
    t.equal(await append(q, [ev(1, ''), ev(2, '')], 2), 2);
    t.equal(await append(q, [ev(3, '')], 2), -2);
    t.same(await polls.poll(q, 10, -1, { mode: 'ack', max: 10 }), { status: 'overflowed' });
    t.equal(await append(q, [ev(4, '')], 2), -1);
  });

  t.test('the event limit counts what the queue holds, not the ids it has used', async (t) => {
    const q = await newQueue();
    await store.finishRegister(q, {});
    t.equal(await append(q, [ev(1, ''), ev(2, '')], 2), 2);
    t.equal((await polls.poll(q, 10, 1, { mode: 'ack', max: 10 })).status, 'ok', 'both acknowledged');
    t.equal(await append(q, [ev(3, ''), ev(4, '')], 2), 2, 'acknowledged events leave room');
    // Events the /register snapshot holds are removed wherever they are, so the queue holds
    // fewer events than its ids span: 4 and 6 are dropped, 5 stays, pruned stays below 5.
    const r = await newQueue();
    await append(r, [ev(5, ''), ev(6, 11), ev(7, 12)], 3);
    t.equal(await store.finishRegister(r, { drafts: '13:13:' }), -1);
    t.same(await ids(r), [[0, 5]]);
    t.equal(await append(r, [ev(8, '')], 2), 1, 'ids 0-3 used, but two events held: within a limit of two');
    t.equal(await append(r, [ev(9, '')], 2), -2, 'a third is over it');
  });

  t.test('an append finds a queue whose stream or meta vanished dead, and recreates neither', async (t) => {
    for (const lost of ['stream', 'meta'] as const) {
      const q = await newQueue();
      await store.finishRegister(q, {});
      t.equal(await append(q, [ev(1, '')]), 1);
      await redis.del(lost === 'stream' ? store.streamKey(q) : store.metaKey(q));
      t.equal(await append(q, [ev(2, '')]), -1, `${lost} lost: dead`);
      t.equal(await redis.exists(store.streamKey(q), store.metaKey(q)), 0, `${lost} lost: nothing left or recreated`);
    }
  });

  t.test("a guest's poll removes their all_public_streams queue, whatever it holds", async (t) => {
    const everything = await newQueue({ allPublicStreams: true });
    const own = await newQueue();
    for (const q of [everything, own]) {
      await store.finishRegister(q, {});
      t.equal(await append(q, [ev(1, '')]), 1);
    }
    t.match(await polls.poll(everything, 10, -1, { mode: 'ack', max: 10 }), { status: 'ok' }, 'a member reads it');
    t.same(await polls.poll(everything, 10, -1, { mode: 'wake', max: 10, guest: true }), { status: 'gone' }, 'not once a guest');
    t.equal(await redis.exists(store.metaKey(everything), store.streamKey(everything)), 0, 'and it is deleted');
    t.same(await polls.poll(everything, 10, -1, { mode: 'ack', max: 10 }), { status: 'gone' });
    t.match(await polls.poll(own, 10, -1, { mode: 'park', max: 10, guest: true }), { status: 'ok', events: [{ id: 0 }] }, "a guest's ordinary queue stays");
  });

  t.test('a queue holds at most so many bytes of unacknowledged events; acknowledged ones free their share', async (t) => {
    const q = await newQueue();
    await store.finishRegister(q, {});
    t.match(await polls.poll(q, 10, -1, { mode: 'ack', max: 10 }), { status: 'ok' }, 'the client polls');
    const big = (seq: number) => ev(seq, '', 'drafts', { type: 'drafts', n: seq, pad: 'x'.repeat(380) });
    const size = big(1).json.length;
    t.equal(await append(q, [big(1), big(2)], 100, 1, 3 * size), 2, 'two fit in three');
    t.equal(await redis.hget(store.metaKey(q), 'bytes'), String(2 * size), 'counted');
    t.match(await polls.poll(q, 10, 0, { mode: 'ack', max: 10 }), { status: 'ok', events: [{ id: 1 }] }, 'the first is acknowledged');
    t.equal(await redis.hget(store.metaKey(q), 'bytes'), String(size), 'and no longer counts');
    t.equal(await append(q, [big(3), big(4)], 100, 1, 3 * size), 2, 'so two more fit');
    t.equal(await append(q, [big(5)], 100, 1, 3 * size), -2, 'a fourth unacknowledged one overflows the queue');
    t.same(await polls.poll(q, 10, 1, { mode: 'ack', max: 10 }), { status: 'overflowed' }, 'the client is told to register again');

    const r = await newQueue();
    t.equal(await append(r, [ev(1, 9, 'users'), ev(2, '')], 100, 1, 1 << 20), 2);
    await store.finishRegister(r, { users: '10:10:' });
    t.equal(await redis.hget(store.metaKey(r), 'bytes'), String(ev(2, '').json.length), 'events the /register state held are not counted');
  });

  t.test('acknowledgements free exactly the bytes of what they acknowledge, however the events were written', async (t) => {
    const meta = (q: string) => store.metaKey(q);
    const sized = (seq: number, pad: number, txid: number | '' = '') => ev(seq, txid, 'drafts', { type: 'drafts', n: seq, pad: 'x'.repeat(pad) });
    const len = (e: QueuedEvent) => e.json.length;
    const heartbeatLen = '{"type":"heartbeat"}'.length;
    const bytes = async (q: string) => Number(await redis.hget(meta(q), 'bytes'));
    const ack = async (q: string, last: number) => t.match(await polls.poll(q, 10, last, { mode: 'ack', max: 100 }), { status: 'ok' }, `acknowledged through ${last}`);

    // From the totals: each acknowledgement leaves `ack_c` for the next.
    const q = await newQueue();
    await store.finishRegister(q, {});
    t.equal(await redis.hget(meta(q), 'ack_c'), '-1:0');
    const a = [sized(1, 10), sized(2, 200), sized(3, 35)];
    await append(q, a);
    t.equal(await polls.heartbeat(q), 3);
    await append(q, [sized(4, 1)]);
    t.equal(await bytes(q), a.reduce((n, e) => n + len(e), 0) + heartbeatLen + len(sized(4, 1)));
    const fieldsOf = async (queueId: string, id: number) => ((await redis.xrange(store.streamKey(queueId), `${id}-1`, `${id}-1`))[0]?.[1] ?? []).filter((_, i) => i % 2 === 0);
    t.same(await fieldsOf(q, 4), ['e', 'c'], 'after /register an entry keeps neither origin nor txid (only FINISH_REGISTER reads them)');
    await ack(q, 1);
    t.equal(await bytes(q), len(a[2] as QueuedEvent) + heartbeatLen + len(sized(4, 1)), 'the first two freed');
    t.equal(await redis.hget(meta(q), 'ack_c'), `1:${len(a[0] as QueuedEvent) + len(a[1] as QueuedEvent)}`);
    await ack(q, 3);
    t.equal(await bytes(q), len(sized(4, 1)), 'then the third and the heartbeat');
    await ack(q, 4);
    t.equal(await bytes(q), 0, 'then everything');
    t.same(await polls.poll(q, 10, 6, { mode: 'ack', max: 100 }), { status: 'missing', id: 6 }, 'an id not in the queue is refused as before');

    // /register deleted an event after its acknowledged point: acknowledgements read the entries
    // until they are past it, then the totals serve again.
    const r = await newQueue();
    const kept = [sized(1, 40, 12), sized(3, 70, ''), sized(4, 5, '')];
    await append(r, [kept[0] as QueuedEvent, sized(2, 300, 11), kept[1] as QueuedEvent]);
    t.same(await fieldsOf(r, 0), ['e', 'o', 't', 'c'], 'before /register ends it does');
    t.equal(await store.finishRegister(r, { drafts: '10:14:12' }), -1, 'the first event is not in the state');
    t.equal(await bytes(r), len(kept[0] as QueuedEvent) + len(kept[1] as QueuedEvent), 'the deleted one no longer counts');
    t.equal(await redis.hget(meta(r), 'scan_until'), '1');
    await ack(r, 0);
    t.equal(await bytes(r), len(kept[1] as QueuedEvent), 'scanned: the deleted event is not freed twice');
    t.equal(await redis.hget(meta(r), 'ack_c'), '', 'not past the deleted event yet');
    await append(r, [kept[2] as QueuedEvent]);
    await ack(r, 2);
    t.equal(await bytes(r), len(kept[2] as QueuedEvent));
    t.match(await redis.hget(meta(r), 'ack_c'), /^2:\d+$/, 'past it: the totals again');
    await ack(r, 3);
    t.equal(await bytes(r), 0);

    // Entries and metas of an older writer (no `c`, no `ack_c`) are counted by reading them.
    const old = await newQueue();
    await store.finishRegister(old, {});
    await append(old, [sized(1, 20)]);
    await redis.hdel(meta(old), 'ack_c');
    await redis.xadd(store.streamKey(old), '1-1', 'e', sized(2, 50).json, 'o', '', 't', '');
    await redis.hset(meta(old), 'next_id', 2, 'bytes', len(sized(1, 20)) + len(sized(2, 50)));
    await ack(old, 0);
    t.equal(await bytes(old), len(sized(2, 50)));
    await append(old, [sized(3, 7)]);
    await ack(old, 1);
    t.equal(await bytes(old), len(sized(3, 7)), 'an entry without its total');
    t.equal(await redis.hget(meta(old), 'ack_c'), '');
    await ack(old, 2);
    t.equal(await bytes(old), 0);
    t.match(await redis.hget(meta(old), 'ack_c'), /^2:\d+$/);
  });

  t.test('a queue never polled holds a sixteenth of the byte budget; its first poll gives it the whole', async (t) => {
    const big = (seq: number) => ev(seq, '', 'drafts', { type: 'drafts', n: seq, pad: 'x'.repeat(380) });
    const size = big(1).json.length;
    const budget = 16 * 2 * size;
    const unpolled = await newQueue();
    await store.finishRegister(unpolled, {});
    t.equal(await append(unpolled, [big(1), big(2)], 100, 1, budget), 2, 'two fit in a sixteenth');
    t.equal(await append(unpolled, [big(3)], 100, 1, budget), -2, 'a third overflows the queue nobody polled');
    t.same(await polls.poll(unpolled, 10, -1, { mode: 'ack', max: 10 }), { status: 'overflowed' }, 'its client, if it comes, registers again');

    const polled = await newQueue();
    await store.finishRegister(polled, {});
    t.equal(await append(polled, [big(1), big(2)], 100, 1, budget), 2);
    t.match(await polls.poll(polled, 10, -1, { mode: 'ack', max: 10 }), { status: 'ok', events: [{ id: 0 }, { id: 1 }] }, 'polled (nothing acknowledged)');
    t.equal(await append(polled, [big(3), big(4), big(5)], 100, 1, budget), 3, 'now it holds more than a sixteenth');
  });

  t.test('a queue never polled lives only until its first-poll deadline; a poll of any kind gives it its lifespan', async (t) => {
    const q = await newQueue({ lifespanMs: 3_600_000, firstPollWithinMs: 60_000 });
    await store.finishRegister(q, {});
    t.ok((await redis.pttl(store.metaKey(q))) <= 60_000, 'never polled: a minute');
    t.ok((await redis.pttl(store.streamKey(q))) <= 60_000);
    t.match(await polls.poll(q, 10, -1, { mode: 'ack', max: 10 }), { status: 'ok' });
    t.ok((await redis.pttl(store.metaKey(q))) > 3_500_000, 'polled once (dont_block): its hour');
    t.ok((await redis.pttl(store.streamKey(q))) > 3_500_000);
  });

  t.test('a half-lost queue is dead and is never recreated by a write', async (t) => {
    const q = await newQueue();
    await store.finishRegister(q, {});
    await redis.del(store.streamKey(q));
    t.same(await polls.poll(q, 10, -1, { mode: 'wake', max: 10 }), { status: 'gone' });
    t.equal(await redis.exists(store.metaKey(q)), 0, 'the leftover meta was removed');
    t.equal(await append(q, [ev(1, '')]), -1);
    t.equal(await redis.exists(store.streamKey(q), store.metaKey(q)), 0, 'nothing was recreated');
    t.same(await polls.poll(q, 10, -1, { mode: 'park', max: 10 }), { status: 'gone' });
    t.equal(await polls.release(q, Date.now(), 1), -1);
    t.equal(await polls.heartbeat(q), -1);
  });

  t.test('parking: generations, the parker, a life while parked; ending never shortens it', async (t) => {
    const q = await newQueue({ lifespanMs: 1000 });
    await store.finishRegister(q, {});
    const park = (replica: string) => polls.poll(q, 10, -1, { mode: 'park', max: 10, parkTtlExtraMs: 5000, parker: replica });
    t.same(await park('r1'), { status: 'parked', epoch: 'e1', generation: 1, previousParker: '' });
    t.same(await park('r2'), { status: 'parked', epoch: 'e1', generation: 2, previousParker: 'r1' }, 'the newer poll learns who held the older one');
    t.ok((await redis.pttl(store.metaKey(q))) > 5000, 'a parked queue outlives its lifespan');
    await polls.release(q, Date.now(), 1);
    t.ok((await redis.pttl(store.streamKey(q))) > 5000, 'a release never shortens the life another park gave');
    t.equal(await redis.hget(store.metaKey(q), 'parked_on'), 'r2', 'an older generation does not clear the parker');
    await append(q, [ev(1, '')]);
    t.match(await polls.poll(q, 10, -1, { mode: 'wake', max: 10, generation: 2 }), { status: 'ok', events: [{ id: 0 }] });
    t.equal(await redis.hget(store.metaKey(q), 'parked_on'), '', 'a poll ending with events clears itself');
    t.match(await park('r1'), { status: 'ok', events: [{ id: 0 }] }, 'with events waiting, a park answers at once');
    t.equal(await polls.release(q, Date.now(), 3), 0);
  });

  t.test('user index: dead queues are pruned; delete checks the owner', async (t) => {
    const a = await newQueue({ userId: 20 });
    const b = await newQueue({ userId: 20, allPublicStreams: true, realmId: 3 });
    t.same((await store.liveQueuesOf(20)).sort(), [a, b].sort());
    t.same((await store.publicQueuesOfRealms([3])).get(3), [b]);
    await redis.del(store.metaKey(a));
    t.same(await store.liveQueuesOf(20), [b]);
    t.equal(await store.delete(b, 21), false, 'not the owner');
    t.equal(await store.delete(b, 20), true);
    t.same(await store.liveQueuesOf(20), []);
    t.same((await store.publicQueuesOfRealms([3])).get(3), []);
    t.equal(await store.delete(b, 20), false, 'twice');
  });

  t.test("delivery lookup: every recipient's queues and a realm's all_public_streams queues in one call, in order", async (t) => {
    const a = await newQueue({ userId: 30 });
    const b = await newQueue({ userId: 30 });
    const c = await newQueue({ userId: 31, allPublicStreams: true, realmId: 4 });
    const many = Array.from({ length: 2000 }, (_, i) => 100_000 + i);
    const { byUser, byRealm } = await store.queuesOf([31, ...many, 30], [4, 5]);
    t.same(byUser.get(30)?.sort(), [a, b].sort());
    t.same(byUser.get(31), [c]);
    t.ok(many.every((u) => byUser.get(u)?.length === 0), 'users without queues have none');
    t.same(byRealm.get(4), [c]);
    t.same(byRealm.get(5), []);
    t.match(await store.queuesOf([]), { byUser: new Map(), byRealm: new Map() });
  });

  t.test('the index generation moves with every change of an index, and is read with the indexes and the appends', async (t) => {
    const g0 = (await store.queuesOf([40])).generation;
    const a = await newQueue({ userId: 40 });
    const read = await store.queuesOf([40]);
    t.same(read.byUser.get(40), [a]);
    t.not(read.generation, g0, 'a new queue moves it');
    t.equal((await store.queuesOf([41])).generation, read.generation, 'reads do not');
    const appended = await store.appendAndAdvance(new Map([[a, [ev(1, '')]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    t.equal(appended.generation, read.generation, 'the appends report the generation they ran under');
    await store.removeFromIndexes(a, { userId: 40, realmId: 1 });
    const after = await store.queuesOf([40]);
    t.same(after.byUser.get(40), []);
    t.not(after.generation, read.generation, 'a removal moves it');
    const b = await newQueue({ userId: 40 });
    t.equal(await store.delete(b, 40), true);
    t.not((await store.queuesOf([40])).generation, after.generation, 'a deletion moves it');
  });

  t.test('append and cursor move in one round trip: the move is fenced and reset like advanceCursor', async (t) => {
    const q = await newQueue();
    await store.ensureRegistry('epoch-m', 0);
    const r = await store.appendAndAdvance(new Map([[q, [ev(1, '')]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1, { epoch: 'epoch-m', seq: 7 });
    t.same([...r.appended], [[q, 1]]);
    t.equal(r.cursor, 'ok');
    t.same(await store.readRegistry(), { epoch: 'epoch-m', cursor: 7 });
    t.match(await store.appendAndAdvance(new Map(), { maxEvents: 100, maxBytes: 1 << 20 }, 1, { epoch: 'epoch-other', seq: 8 }), { appended: new Map(), cursor: 'reset' });
    const unmoved = await store.appendAndAdvance(new Map([[q, [ev(2, ''), ev(3, '')]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    t.same(unmoved.appended, new Map([[q, 2]]));
    t.same(unmoved.newestIds, new Map([[q, 2]]), 'the newest id of the queue: its events are 1 and 2');
    const skipped = await store.appendAndAdvance(new Map([[q, [ev(3, '')]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    t.same([skipped.appended, skipped.newestIds], [new Map([[q, 0]]), new Map()], 'nothing appended: no newest id');
    t.notOk('cursor' in unmoved, 'no move asked: none made');
    await store.deleteRegistry();
  });

  t.test('many queues in one append: each gets its own events, shared texts included, and its own result', async (t) => {
    const [a, b, dead, fenced] = [await newQueue(), await newQueue(), await newQueue(), await newQueue()];
    await store.delete(dead, 10);
    t.equal(await append(fenced, [ev(1, '')], 100, 9), 1, 'a newer term wrote to this one');
    const shared = ev(3, '', 'drafts', { type: 'drafts', n: 3 });
    const own = ev(3, '', 'drafts', { type: 'drafts', n: 33 });
    const perQueue = new Map([
      [a, [ev(2, ''), shared]],
      [dead, [shared]],
      [b, [{ ...shared }, ev(4, '')]],
      [fenced, [own]],
    ]);
    const r = await store.append(perQueue, { maxEvents: 100, maxBytes: 1 << 20 }, 2);
    t.same([...r], [[a, 2], [dead, -1], [b, 2], [fenced, -3]]);
    t.same(await ids(a), [[0, 2], [1, 3]]);
    t.same(await ids(b), [[0, 3], [1, 4]]);
    t.same(await ids(fenced), [[0, 1]], 'the fenced queue kept only what its newer term wrote');

    // Equal JSON under different seqs (or origins) stays two events.
    const c = await newQueue();
    const body = { type: 'drafts', n: 7 };
    const again = await store.append(new Map([[c, [ev(7, '', 'drafts', body), ev(8, '', 'drafts', body), ev(9, 5, 'users', body)]]]), { maxEvents: 100, maxBytes: 1 << 20 }, 2);
    t.equal(again.get(c), 3);
    t.same(await ids(c), [[0, 7], [1, 7], [2, 7]]);
  });

  t.test('a fan-out larger than one script call goes as several, in order, each queue once', async (t) => {
    const queues: string[] = [];
    for (let i = 0; i < 230; i++) queues.push(await newQueue());
    const perQueue = new Map(queues.map((q, i) => [q, i % 2 ? [ev(1, ''), ev(2, '')] : [ev(1, '')]]));
    const r = await store.append(perQueue, { maxEvents: 100, maxBytes: 1 << 20 }, 1);
    t.ok(queues.every((q, i) => r.get(q) === (i % 2 ? 2 : 1)), 'every queue appended');
    t.same(await ids(queues[229] as string), [[0, 1], [1, 2]]);
  });

  t.test('registry: created once, reset changes the epoch, the cursor only moves forward', async (t) => {
    const r1 = await store.ensureRegistry('epoch-a', 7);
    t.same(r1, { epoch: 'epoch-a', cursor: 7 });
    t.same(await store.ensureRegistry('epoch-b', 99), r1, 'an existing registry is kept');
    t.equal(await store.advanceCursor('epoch-a', 12, 1), 'ok');
    t.equal(await store.advanceCursor('epoch-a', 9, 1), 'ok');
    t.same(await store.readRegistry(), { epoch: 'epoch-a', cursor: 12 });
    await store.deleteRegistry();
    t.equal(await store.advanceCursor('epoch-a', 13, 1), 'reset', 'a lost registry is noticed');
  });

  t.test('leader lock: one holder; renew and release only by it; each new holder gets a higher term', async (t) => {
    const first = await store.acquireLock('me', 5000);
    t.ok(first && first > 0, 'a term');
    t.equal(await store.acquireLock('you', 5000), undefined);
    t.notOk(await store.renewLock('you', 5000));
    t.ok(await store.renewLock('me', 5000));
    await store.releaseLock('you');
    t.equal(await store.acquireLock('you', 5000), undefined);
    await store.releaseLock('me');
    const second = await store.acquireLock('you', 5000);
    t.ok(second !== undefined && first !== undefined && second > first, `the next term is higher (${first} then ${second})`);
    // Redis comes back empty (lock and counter gone): the next term is still higher, so a
    // former leader writing with its old term is fenced off rather than fencing its successor.
    // Terms fall back to the clock in ms, so the loss is made at least a few ms after the last
    // term was taken, as any real Redis restart is (in the same ms the two could be equal).
    await new Promise((resolve) => setTimeout(resolve, 5));
    await redis.del(store.leaderKey, store.termKey);
    const third = await store.acquireLock('me', 5000);
    t.ok(third !== undefined && second !== undefined && third > second, `higher after Redis lost its data (${second} then ${third})`);
  });

  t.test('fencing: once a newer term wrote, an older term can neither append nor move the cursor', async (t) => {
    const q = await newQueue();
    t.equal(await append(q, [ev(1, '')], 100, 5), 1, 'term 5 appends');
    t.equal(await append(q, [ev(2, '')], 100, 6), 1, 'term 6 appends');
    t.equal(await append(q, [ev(3, '')], 100, 5), -3, 'term 5 is fenced off this queue');
    t.same(await ids(q), [[0, 1], [1, 2]], 'nothing of the fenced append landed');
    const other = await newQueue();
    t.equal(await append(other, [ev(3, '')], 100, 5), 1, 'a queue the newer term has not written to yet still takes the older one (in order: it holds no newer events)');

    await store.ensureRegistry('epoch-f', 0);
    t.equal(await store.advanceCursor('epoch-f', 10, 5), 'ok');
    t.equal(await store.claimRegistry(6), true, 'term 6 claims the registry');
    t.equal(await store.advanceCursor('epoch-f', 20, 5), 'fenced', 'term 5 can no longer move the cursor');
    t.equal(await store.claimRegistry(5), false, 'nor claim it back');
    t.equal(await store.advanceCursor('epoch-f', 20, 6), 'ok');
    t.same(await store.readRegistry(), { epoch: 'epoch-f', cursor: 20 });
  });
});

/**
 * GET /events in the process that holds the client's HTTP request (the gateway): acknowledging,
 * immediate replies, and parked long-polls, straight from the queues in Redis.
 *
 * A parked poll is a small record in `parked` (queue id → poll) plus a heartbeat timer. It
 * ends when events reach its queue (the events service's appender broadcasts the touched
 * queue ids to every gateway), with a heartbeat after 45–55 s, when a newer poll on the same
 * queue parks anywhere (broadcast with the poll's generation, so the older one ends with
 * `events: []`), when its client leaves (the park is released in Redis), or when this
 * gateway stops (also `events: []`: nothing is lost, since only the client's next
 * last_event_id acknowledges). While a client keeps polling, its polls are answered or parked
 * here from what the wakes brought, without Redis, between reads of its queue (queue-tails.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '../bus/index.js';
import { eventsBroadcast, type WakeAppended } from '../contracts/index.js';
import { AppError, badRequest } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { traceClockMs } from '../telemetry/index.js';
import type { PollOptions, PollResult, PollStore } from './poll-store.js';
import { QueueTails, TAIL_IDLE_MS } from './queue-tails.js';
import { withId } from './with-id.js';

export const badEventQueueId = (queueId: string) => new AppError('BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`, 400, { queue_id: queueId });

/**
 * How long the release of a poll answered from its wake waits for the client's next poll
 * here, which makes it unnecessary when it parks (see answerFromWake).
 */
const RELEASE_HOLD_MS = 1000;
/** A parked poll keeps its queue alive this much longer than its lifespan (covers the longest park). */
const PARK_TTL_SLACK_MS = 90_000;
/** What a queue's tail keeps of the newest events (queue-tails.ts); a client further behind reads Redis. */
const TAIL_MAX_EVENTS = 100;
const TAIL_MAX_BYTES = 64 * 1024;
/** How long a poll parked here without Redis (queue-tails.ts) waits before it parks in Redis. */
const LOCAL_PARK_MS = 1000;
/** One reply stays small enough for a client to take in at once. */
const MAX_EVENTS_PER_REPLY = 1000;
const MAX_REPLY_BYTES = 512 * 1024;

export { withId };

/**
 * A GET /events answer with its events as JSON text (an array, each event with its `id`),
 * spliced into the response as it is; `queue_id` is there when the answer ends a parked
 * poll (Zulip's shape).
 */
export interface PollReply {
  events_json: string;
  queue_id?: string;
  /**
   * With PollHubOptions.trace, on the answer of a poll a wake ended: when the wake was sent, when
   * it was heard here and when the answer was ready (wall-clock ms, comma-separated).
   */
  trace?: string;
}

export interface PollRequest {
  queueId: string;
  userId: number;
  /** The poller's current role is guest (the gateway checks it on every request). */
  guest: boolean;
  lastEventId: number;
  dontBlock: boolean;
  /** The first read is made only if these keys hold these values (see PollOptions.expect). */
  expect?: PollOptions['expect'];
}

/** What `getEvents` answers when a key of `PollRequest.expect` held another value: nothing was done. */
export const UNEXPECTED = 'unexpected';
export type PollAnswer = PollReply | typeof UNEXPECTED;

export interface PollHubOptions {
  bus: Bus;
  store: PollStore;
  log: Logger;
  /** Delay of a parked poll's heartbeat (Zulip: 45 + rand(0..10) s). */
  heartbeatMs: () => number;
  /** ZC_DELIVERY_TRACE: answers to woken polls carry PollReply.trace. */
  trace?: boolean;
  /** How long a queue's tail may answer for Redis after Redis last answered (queue-tails.ts; tests only). */
  tailFreshMs?: number;
}

const eventsJson = (events: readonly string[]) => `[${events.join(',')}]`;
/** PollReply.trace of a poll a wake ended, if it was traced. */
const traceOf = (p: Parked): { trace?: string } => (p.woken ? { trace: `${p.woken.sentAt},${p.woken.heardAt},${traceClockMs()}` } : {});
const noEvents = (queueId: string): PollReply => ({ events_json: '[]', queue_id: queueId });

interface Parked {
  queueId: string;
  userId: number;
  guest: boolean;
  lastEventId: number;
  /** Set once Redis has counted this poll; 0 until then. */
  generation: number;
  /** The registry epoch of the queue, once parked. */
  epoch?: string;
  /** With PollHubOptions.trace: the last wake's `sent_at`, and when it was heard (wall-clock ms). */
  woken?: { sentAt: number; heardAt: number };
  timer?: NodeJS.Timeout;
  reading: boolean;
  wokenWhileReading: boolean;
  done: boolean;
  resolve(answer: PollAnswer): void;
  reject(e: unknown): void;
}

export class PollHub {
  private readonly parked = new Map<string, Parked>();
  /** Releases held for the queue's next poll (answerFromWake): queue id → the release to send. */
  private readonly heldReleases = new Map<string, { send: () => void; timer: NodeJS.Timeout; generation: number }>();
  /** What is known here of the queues polled here lately (queue-tails.ts). */
  private readonly tails: QueueTails;
  private tailSweep?: NodeJS.Timeout;
  /** The bus's losses when the tails were last cleared for them. */
  private busLosses = 0;
  /** Recorded in a queue while a poll of this hub is parked on it, so a newer poll elsewhere ends ours. */
  readonly id = randomUUID();
  private stopListening?: () => void;
  private stopping = false;

  constructor(private readonly o: PollHubOptions) {
    this.tails = new QueueTails({ maxEvents: TAIL_MAX_EVENTS, maxBytes: TAIL_MAX_BYTES, freshMs: o.tailFreshMs }, (epoch) => o.store.isKnownCurrentEpoch(epoch));
  }

  /** Number of polls parked here (metrics, tests). */
  get parkedCount(): number {
    return this.parked.size;
  }

  start(): void {
    this.stopListening = this.o.bus.listen([eventsBroadcast], (_subject, b) => {
      if (b.wake) {
        const heardAt = this.o.trace && b.sent_at !== undefined ? traceClockMs() : undefined;
        for (const id of b.wake) {
          const p = this.parked.get(id);
          if (p && heardAt !== undefined) p.woken = { sentAt: b.sent_at as number, heardAt };
          if (p && !(b.appended && this.answerFromWake(p, b.appended))) this.check(p);
          this.tails.woken(id, b.appended);
        }
      }
      if (b.supplant) {
        const p = this.parked.get(b.supplant.queue_id);
        if (p && p.generation > 0 && p.generation < b.supplant.generation) this.finish(p, noEvents(p.queueId));
      }
    });
    this.tailSweep = setInterval(() => this.tails.sweep(performance.now() - TAIL_IDLE_MS), TAIL_IDLE_MS);
    this.tailSweep.unref();
  }

  /** Forgets what is known here of a queue (its client deleted it through this gateway). */
  forget(queueId: string): void {
    this.tails.forget(queueId);
  }

  /** Ends every parked poll with no events and releases its park; new polls answer at once from now on. */
  stop(): void {
    this.stopping = true;
    for (const p of [...this.parked.values()]) this.leave(p);
    for (const queueId of [...this.heldReleases.keys()]) this.takeHeldRelease(queueId)?.();
    clearInterval(this.tailSweep);
    this.tails.clear();
    this.stopListening?.();
  }

  /**
   * Answers a poll: at once when it may not block or events wait, else when it ends parked.
   * `whenGone` is given the function that ends the park when the client has left.
   */
  async getEvents(r: PollRequest, whenGone?: (leave: () => void) => void): Promise<PollAnswer> {
    if (r.dontBlock || this.stopping) {
      // Sent before the poll, as it would have been without the hold.
      this.takeHeldRelease(r.queueId)?.();
      const res = await this.poll(r.queueId, r.userId, r.lastEventId, { mode: 'ack', guest: r.guest, ...(r.expect ? { expect: r.expect } : {}) });
      if (res.status === UNEXPECTED) return UNEXPECTED;
      const events = this.eventsOf(r.queueId, res);
      return events.length > 0 || r.dontBlock ? { events_json: eventsJson(events) } : noEvents(r.queueId);
    }
    const now = performance.now();
    // Wakes may have been missed while the bus was away: what was kept of them is not relied on.
    if (!this.o.bus.isOnline || this.o.bus.losses !== this.busLosses) {
      this.tails.clear();
      this.busLosses = this.o.bus.losses;
    }
    const { trusted, blind } = this.tails.arrive(r, now);
    if (trusted) {
      const waiting = this.tails.waiting(r);
      if (waiting.length > 0) {
        // As a poll that parks here would: an older one parked here ends.
        this.endOlder(r.queueId);
        return { events_json: eventsJson(waiting) };
      }
      const here = this.tails.parkable(r, now);
      if (here) return this.park(r, whenGone, { blind, here });
    }
    return this.park(r, whenGone, { blind });
  }

  private poll(queueId: string, userId: number, lastEventId: number, o: Omit<PollOptions, 'max'>): Promise<PollResult> {
    return this.o.store.poll(queueId, userId, lastEventId, { max: MAX_EVENTS_PER_REPLY, ...o });
  }

  /** The client events of a poll result, as JSON text each; errors for everything but events. */
  private eventsOf(queueId: string, r: PollResult): string[] {
    switch (r.status) {
      case 'gone':
      case 'overflowed':
        throw badEventQueueId(queueId);
      case 'pruned':
        throw badRequest(`An event newer than ${r.id} has already been pruned!`);
      case 'missing':
        throw badRequest(`Event ${r.id} was not in this queue`);
      case 'parked':
      case 'unexpected':
        return [];
    }
    const out: string[] = [];
    let bytes = 0;
    for (const e of r.events) {
      bytes += e.json.length;
      if (out.length > 0 && bytes > MAX_REPLY_BYTES) break;
      out.push(withId(e.id, e.json));
    }
    return out;
  }

  private async assertCurrentEpoch(queueId: string, r: PollResult): Promise<void> {
    if ((r.status === 'ok' || r.status === 'parked') && !(await this.o.store.isCurrentEpoch(r.epoch))) throw badEventQueueId(queueId);
  }

  /**
   * Acknowledges, then answers at once if events wait, else parks. The poll is listed here
   * before Redis is asked, so a wake that comes meanwhile is not missed: its re-read reaches
   * Redis after the park, in the same pipeline order.
   */
  private park(r: PollRequest, whenGone: ((leave: () => void) => void) | undefined, o: { blind: number; here?: { generation: number; epoch: string } }): Promise<PollAnswer> {
    return new Promise<PollAnswer>((resolve, reject) => {
      const p: Parked = {
        queueId: r.queueId,
        userId: r.userId,
        guest: r.guest,
        lastEventId: r.lastEventId,
        generation: 0,
        reading: false,
        wokenWhileReading: false,
        done: false,
        resolve,
        reject,
      };
      this.endOlder(p.queueId);
      this.parked.set(p.queueId, p);
      whenGone?.(() => this.leave(p));
      if (o.here) {
        // Parked here only (queue-tails.ts), under the generation of the last park in Redis, which
        // a newer poll elsewhere supplants as it would that park; a held release stays held. Still
        // waiting after LOCAL_PARK_MS, it parks in Redis as any poll: that gives the queue its life
        // and idle clock, and finds events whose wake never came (an events replica that died
        // between appending and waking).
        p.generation = o.here.generation;
        p.epoch = o.here.epoch;
        p.timer = setTimeout(() => this.parkInRedis(p, r, o.blind, true), LOCAL_PARK_MS);
        return;
      }
      this.parkInRedis(p, r, o.blind, false);
    });
  }

  /** Parks `p` in Redis (or answers it with the events that wait); `wasParked`: it waited here first. */
  private parkInRedis(p: Parked, r: PollRequest, blind: number, wasParked: boolean): void {
    let heldRelease = this.takeHeldRelease(p.queueId);
    void (async () => {
      const res = await this.poll(p.queueId, p.userId, p.lastEventId, {
        mode: 'park',
        nowMs: Date.now(),
        parkTtlExtraMs: PARK_TTL_SLACK_MS,
        parker: this.id,
        guest: p.guest,
        ...(r.expect ? { expect: r.expect } : {}),
      });
      // A poll that parks does all the held release would have (a later idle clock, the
      // parker replaced, a longer life); any other outcome leaves it to be sent.
      if (res.status !== 'parked') heldRelease?.();
      heldRelease = undefined;
      if (res.status === UNEXPECTED) {
        this.tails.forget(p.queueId);
        return this.finish(p, UNEXPECTED);
      }
      await this.assertCurrentEpoch(p.queueId, res);
      if (res.status === 'parked') this.tails.read(r, blind, { kind: 'parked', epoch: res.epoch, generation: res.generation }, performance.now());
      if (res.status === 'ok') {
        const newestId = res.events.length > 0 ? (res.events[res.events.length - 1] as { id: number }).id : r.lastEventId;
        this.tails.read(r, blind, { kind: 'events', epoch: res.epoch, newestId, complete: res.events.length < MAX_EVENTS_PER_REPLY }, performance.now());
      }
      if (res.status !== 'parked') {
        // Events were waiting: an immediate answer, without queue_id (Zulip's shape), unless
        // the poll had waited here.
        const events = this.eventsOf(p.queueId, res);
        this.finish(p, { events_json: eventsJson(events), ...(wasParked ? { queue_id: p.queueId } : {}) });
        return;
      }
      p.generation = res.generation;
      p.epoch = res.epoch;
      // Ended while Redis parked it (supplanted here, client gone, stopping): undo the park.
      if (p.done) return this.release(p);
      // A poll parked on another gateway is ended there; ours were ended above.
      if (res.previousParker !== '' && res.previousParker !== this.id) {
        this.o.bus.broadcast(eventsBroadcast, { supplant: { queue_id: p.queueId, generation: res.generation } });
      }
      p.timer = setTimeout(() => void this.heartbeat(p), this.o.heartbeatMs());
    })().catch((e) => {
      heldRelease?.();
      this.tails.forget(p.queueId);
      this.fail(p, e);
    });
  }

  private async heartbeat(p: Parked): Promise<void> {
    try {
      if (p.done) return;
      if ((await this.o.store.heartbeat(p.queueId)) < 0) throw badEventQueueId(p.queueId);
      this.check(p);
    } catch (e) {
      this.fail(p, e);
    }
  }

  /**
   * Ends a parked poll with the events its wake carries, saving the re-read (a round trip to
   * Redis, on the way of every delivery to a waiting client). Only when that read could not
   * have answered otherwise: Redis has counted the park (nothing after lastEventId was in the
   * queue then), no read is under way, the queue belongs to the current epoch, and its first
   * new event is the very next id (after a lost wake there would be a gap: the queue is read).
   * The park is then released as the read would have done (the client connected now, the
   * queue is no longer parked on), but not at once: the client's next poll usually comes to
   * this gateway within milliseconds, and when it parks, its POLL does everything RELEASE
   * would (a later idle clock, the parker replaced under a new generation, a longer life), so
   * the release is held up to RELEASE_HOLD_MS and dropped then; one Redis script less per
   * delivery. Any other next poll here sends it first (dont_block) or after (a park that
   * found events), and it goes at the end of the hold or of this hub anyway. Harmless after
   * a poll elsewhere (RELEASE only lengthens lifetimes, and clears the parker only of its
   * own generation).
   */
  private answerFromWake(p: Parked, appended: WakeAppended): boolean {
    const mine = appended.queues[p.queueId];
    if (!mine || p.done || p.reading || p.generation === 0 || p.epoch === undefined || !this.o.store.isKnownCurrentEpoch(p.epoch)) return false;
    const first = mine[0] as number;
    if (first !== p.lastEventId + 1) return false;
    const out: string[] = [];
    let bytes = 0;
    for (let k = 1; k < mine.length && out.length < MAX_EVENTS_PER_REPLY; k++) {
      const json = appended.json[mine[k] as number];
      if (json === undefined) return false;
      bytes += json.length;
      if (out.length > 0 && bytes > MAX_REPLY_BYTES) break;
      out.push(withId(first + k - 1, json));
    }
    this.finish(p, { events_json: eventsJson(out), queue_id: p.queueId, ...traceOf(p) });
    this.holdRelease(p);
    return true;
  }

  /** A newer poll of the queue came here: the one parked here ends with no events. */
  private endOlder(queueId: string): void {
    const older = this.parked.get(queueId);
    if (older) this.finish(older, noEvents(older.queueId));
  }

  private holdRelease(p: Parked): void {
    // A held release of the same park generation says less than this one (an earlier time): it
    // is dropped, not sent, so polls parked here between parks in Redis add no script each.
    const older = this.heldReleases.get(p.queueId);
    if (older && older.generation === p.generation) {
      clearTimeout(older.timer);
      this.heldReleases.delete(p.queueId);
    } else {
      this.takeHeldRelease(p.queueId)?.();
    }
    const nowMs = Date.now();
    const send = () => this.release(p, nowMs);
    const timer = setTimeout(() => this.takeHeldRelease(p.queueId)?.(), RELEASE_HOLD_MS);
    timer.unref();
    this.heldReleases.set(p.queueId, { send, timer, generation: p.generation });
  }

  /** The queue's held release, no longer held: the caller sends it (calls it) or drops it. */
  private takeHeldRelease(queueId: string): (() => void) | undefined {
    const held = this.heldReleases.get(queueId);
    if (!held) return undefined;
    this.heldReleases.delete(queueId);
    clearTimeout(held.timer);
    return held.send;
  }

  /** Re-reads a parked poll's queue; ends the poll if there is anything (reads never overlap). */
  private check(p: Parked): void {
    if (p.done) return;
    if (p.reading) {
      p.wokenWhileReading = true;
      return;
    }
    p.reading = true;
    void (async () => {
      try {
        do {
          p.wokenWhileReading = false;
          const res = await this.poll(p.queueId, p.userId, p.lastEventId, { mode: 'wake', nowMs: Date.now(), generation: p.generation, guest: p.guest });
          await this.assertCurrentEpoch(p.queueId, res);
          const events = this.eventsOf(p.queueId, res);
          if (events.length > 0) {
            this.finish(p, { events_json: eventsJson(events), queue_id: p.queueId, ...traceOf(p) });
            return;
          }
        } while (p.wokenWhileReading && !p.done);
      } catch (e) {
        this.fail(p, e);
      } finally {
        p.reading = false;
      }
    })();
  }

  /** Ends a poll without events and clears its park in Redis (or has the park do it once counted). */
  private leave(p: Parked): void {
    if (p.done) return;
    this.finish(p, noEvents(p.queueId));
    if (p.generation > 0) this.release(p);
  }

  private release(p: Parked, nowMs = Date.now()): void {
    this.o.store.release(p.queueId, nowMs, p.generation).catch((err: unknown) => this.o.log.warn({ err, queue_id: p.queueId }, 'queue release failed'));
  }

  private fail(p: Parked, e: unknown): void {
    if (p.done) return;
    this.end(p);
    p.reject(e);
  }

  private finish(p: Parked, answer: PollAnswer): void {
    if (p.done) return;
    this.end(p);
    p.resolve(answer);
  }

  private end(p: Parked): void {
    p.done = true;
    if (p.timer) clearTimeout(p.timer);
    if (this.parked.get(p.queueId) === p) this.parked.delete(p.queueId);
  }
}

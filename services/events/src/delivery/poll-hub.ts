/**
 * GET /events on this replica: acknowledging, immediate replies, and parked long-polls.
 *
 * A parked poll is a small record in `parked` (queue id → poll) plus a heartbeat timer; the
 * bus request that asked stays open until it ends. It ends when events reach its queue (the
 * appender broadcasts the touched queue ids to every replica), with a heartbeat after
 * 45–55 s, when a newer poll on the same queue parks anywhere (broadcast with the poll's
 * generation, so the older one ends with `events: []`), or when this replica stops (also
 * `events: []`: nothing is lost, since only the client's next last_event_id acknowledges).
 */
import type { Subscription } from '@nats-io/nats-core';
import { EVENTS_BROADCAST_SUBJECT, type EventsBroadcast, type GetEventsReply, type GetEventsRequest } from '@zc/shared/contracts';
import { AppError, badRequest } from '@zc/shared/errors';
import type { EventsDeps } from '../deps.js';
import type { PollResult } from '../store/queue-store.js';

export const badEventQueueId = (queueId: string) => new AppError('BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`, 400, { queue_id: queueId });

/** A parked poll keeps its queue alive this much longer than its lifespan (covers the longest park). */
const PARK_TTL_SLACK_MS = 90_000;
/** One reply stays well under NATS's default 1 MiB message limit. */
const MAX_EVENTS_PER_REPLY = 1000;
const MAX_REPLY_BYTES = 512 * 1024;

interface Parked {
  queueId: string;
  userId: number;
  lastEventId: number;
  /** Set once Redis has counted this poll; 0 until then. */
  generation: number;
  timer?: NodeJS.Timeout;
  reading: boolean;
  wokenWhileReading: boolean;
  done: boolean;
  resolve(reply: GetEventsReply): void;
  reject(e: unknown): void;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export class PollHub {
  private readonly parked = new Map<string, Parked>();
  private sub?: Subscription;
  private stopping = false;

  constructor(private readonly deps: EventsDeps) {}

  /** Number of polls parked here (metrics, tests). */
  get parkedCount(): number {
    return this.parked.size;
  }

  start(): void {
    const { bus, log } = this.deps;
    this.sub = bus.nc.subscribe(bus.subject(EVENTS_BROADCAST_SUBJECT), {
      callback: (_err, msg) => {
        let b: EventsBroadcast;
        try {
          b = JSON.parse(dec.decode(msg.data)) as EventsBroadcast;
        } catch {
          log.warn('malformed events broadcast dropped');
          return;
        }
        for (const id of b.wake ?? []) {
          const p = this.parked.get(id);
          if (p) this.check(p);
        }
        if (b.supplant) {
          const p = this.parked.get(b.supplant.queue_id);
          if (p && p.generation > 0 && p.generation < b.supplant.generation) this.finish(p, { events: [], queue_id: p.queueId }, false);
        }
      },
    });
  }

  /** Tells every replica (this one included) that these queues have new events. */
  broadcastWake(queueIds: readonly string[]): void {
    if (queueIds.length === 0) return;
    this.publish({ wake: [...queueIds] });
  }

  private publish(b: EventsBroadcast): void {
    const { bus } = this.deps;
    if (bus.isConnected) bus.nc.publish(bus.subject(EVENTS_BROADCAST_SUBJECT), enc.encode(JSON.stringify(b)));
  }

  /** Ends every parked poll with no events; new polls answer at once from now on. */
  stop(): void {
    this.stopping = true;
    for (const p of [...this.parked.values()]) this.finish(p, { events: [], queue_id: p.queueId }, true);
    this.sub?.unsubscribe();
  }

  async getEvents(r: GetEventsRequest): Promise<GetEventsReply> {
    const events = await this.read(r.queue_id, r.actor.user_id, r.last_event_id, true);
    if (events.length > 0 || r.dont_block) return { events };
    if (this.stopping) return { events: [], queue_id: r.queue_id };
    return this.park(r);
  }

  /** Reads the events after `lastEventId` (acknowledging it first if `ack`), as client events. */
  private async read(queueId: string, userId: number, lastEventId: number, ack: boolean): Promise<Array<Record<string, unknown>>> {
    const r: PollResult = await this.deps.store.poll(queueId, userId, lastEventId, { ack, max: MAX_EVENTS_PER_REPLY });
    switch (r.status) {
      case 'gone':
      case 'overflowed':
        throw badEventQueueId(queueId);
      case 'pruned':
        throw badRequest(`An event newer than ${r.id} has already been pruned!`);
      case 'missing':
        throw badRequest(`Event ${r.id} was not in this queue`);
    }
    if (!(await this.deps.registry.isCurrent(r.epoch))) throw badEventQueueId(queueId);
    const out: Array<Record<string, unknown>> = [];
    let bytes = 0;
    for (const e of r.events) {
      bytes += e.json.length;
      if (out.length > 0 && bytes > MAX_REPLY_BYTES) break;
      out.push({ id: e.id, ...(JSON.parse(e.json) as Record<string, unknown>) });
    }
    return out;
  }

  private park(r: GetEventsRequest): Promise<GetEventsReply> {
    return new Promise<GetEventsReply>((resolve, reject) => {
      const p: Parked = {
        queueId: r.queue_id,
        userId: r.actor.user_id,
        lastEventId: r.last_event_id,
        generation: 0,
        reading: false,
        wokenWhileReading: false,
        done: false,
        resolve,
        reject,
      };
      const older = this.parked.get(p.queueId);
      if (older) this.finish(older, { events: [], queue_id: older.queueId }, false);
      // Listed before anything is awaited, so a wake that arrives meanwhile is not missed.
      this.parked.set(p.queueId, p);
      void (async () => {
        const generation = await this.deps.store.touch(p.queueId, Date.now(), PARK_TTL_SLACK_MS, true);
        if (generation < 0) throw badEventQueueId(p.queueId);
        if (p.done) return;
        p.generation = generation;
        this.publish({ supplant: { queue_id: p.queueId, generation } });
        p.timer = setTimeout(() => void this.heartbeat(p), this.deps.config.heartbeatMs());
        // Events appended between the first read and the listing above.
        this.check(p);
      })().catch((e) => this.fail(p, e));
    });
  }

  private async heartbeat(p: Parked): Promise<void> {
    try {
      if (p.done) return;
      if ((await this.deps.store.heartbeat(p.queueId)) < 0) throw badEventQueueId(p.queueId);
      this.check(p);
    } catch (e) {
      this.fail(p, e);
    }
  }

  /** Reads the parked poll's queue; ends the poll if there is anything (reads never overlap). */
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
          const events = await this.read(p.queueId, p.userId, p.lastEventId, false);
          if (events.length > 0) {
            this.finish(p, { events, queue_id: p.queueId }, true);
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

  private fail(p: Parked, e: unknown): void {
    if (p.done) return;
    this.end(p, false);
    p.reject(e);
  }

  /** `release`: the poll ended on its own (not supplanted), so the queue's idle clock restarts now. */
  private finish(p: Parked, reply: GetEventsReply, release: boolean): void {
    if (p.done) return;
    this.end(p, release);
    p.resolve(reply);
  }

  private end(p: Parked, release: boolean): void {
    p.done = true;
    if (p.timer) clearTimeout(p.timer);
    if (this.parked.get(p.queueId) === p) this.parked.delete(p.queueId);
    if (release) {
      this.deps.store.touch(p.queueId, Date.now(), 0, false).catch((err) => this.deps.log.warn({ err }, 'queue touch failed'));
    }
  }
}

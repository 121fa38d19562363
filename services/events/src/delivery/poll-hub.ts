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
import { randomUUID } from 'node:crypto';
import { EVENTS_ALIVE_EVERY_MS, eventsAlive, eventsBroadcast, isGuest, type EventsBroadcast, type GetEventsReply, type GetEventsRequest } from '@zc/shared/contracts';
import { AppError, badRequest } from '@zc/shared/errors';
import type { EventsDeps } from '../deps.js';
import type { PollResult, QueueStore } from '../store/queue-store.js';

export const badEventQueueId = (queueId: string) => new AppError('BAD_EVENT_QUEUE_ID', `Bad event queue ID: ${queueId}`, 400, { queue_id: queueId });

/** A parked poll keeps its queue alive this much longer than its lifespan (covers the longest park). */
const PARK_TTL_SLACK_MS = 90_000;
/** One reply stays well under NATS's default 1 MiB message limit. */
const MAX_EVENTS_PER_REPLY = 1000;
const MAX_REPLY_BYTES = 512 * 1024;
/** A heartbeat is sent this long before the caller's deadline, so it reaches the caller in time. */
const HEARTBEAT_BEFORE_DEADLINE_MS = 1_000;

/**
 * An event's JSON text (an object, as the appender stored it) with the queue's event id put
 * first, without parsing it: `{"id":7,"type":"message",…}`. The client's parser sees the
 * same object `{id, ...event}` built, at a fraction of the cost.
 */
export function withId(id: number, json: string): string {
  return json.length > 2 ? `{"id":${id},${json.slice(1)}` : `{"id":${id}}`;
}

const eventsJson = (events: readonly string[]) => `[${events.join(',')}]`;
const noEvents = (queueId: string): GetEventsReply => ({ events_json: '[]', queue_id: queueId });

interface Parked {
  queueId: string;
  userId: number;
  /** The poller's role when it parked (the gateway re-checks it on every request). */
  guest: boolean;
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


export class PollHub {
  private readonly parked = new Map<string, Parked>();
  /**
   * Recorded in a queue while a poll of this replica is parked on it; gateways holding a poll
   * parked here learn it and hear it in `eventsAlive` every second.
   */
  readonly replicaId = randomUUID();
  private stopListening?: () => void;
  private aliveTimer?: NodeJS.Timeout;
  private stopping = false;

  constructor(private readonly deps: EventsDeps) {}

  /** Number of polls parked here (metrics, tests). */
  get parkedCount(): number {
    return this.parked.size;
  }

  start(): void {
    this.stopListening = this.deps.bus.listen([eventsBroadcast], (_subject, b) => {
      if (b.wake && b.from !== this.replicaId) this.wake(b.wake);
      if (b.supplant) {
        const p = this.parked.get(b.supplant.queue_id);
        if (p && p.generation > 0 && p.generation < b.supplant.generation) this.finish(p, noEvents(p.queueId));
      }
    });
    const beat = () => this.deps.bus.broadcast(eventsAlive, { replica: this.replicaId });
    beat();
    this.aliveTimer = setInterval(beat, EVENTS_ALIVE_EVERY_MS);
  }

  /**
   * Tells every replica that these queues have new events. This replica's own polls re-read
   * at once rather than when its broadcast comes back from the NATS server (a round trip, and
   * the whole list parsed again, per appended batch).
   */
  broadcastWake(queueIds: readonly string[]): void {
    if (queueIds.length === 0) return;
    this.wake(queueIds);
    this.publish({ wake: [...queueIds], from: this.replicaId });
  }

  private wake(queueIds: readonly string[]): void {
    for (const id of queueIds) {
      const p = this.parked.get(id);
      if (p) this.check(p);
    }
  }

  private publish(b: EventsBroadcast): void {
    const { bus } = this.deps;
    bus.broadcast(eventsBroadcast, b);
  }

  /** Ends every parked poll with no events; new polls answer at once from now on. */
  stop(): void {
    this.stopping = true;
    clearInterval(this.aliveTimer);
    for (const p of [...this.parked.values()]) {
      this.finish(p, noEvents(p.queueId));
      this.deps.store.release(p.queueId, Date.now(), p.generation).catch((err) => this.deps.log.warn({ err }, 'queue release failed'));
    }
    this.stopListening?.();
  }

  /** `deadline`: when the caller stops waiting; a parked poll's heartbeat comes before it. */
  async getEvents(r: GetEventsRequest, deadline?: number): Promise<GetEventsReply> {
    if (r.dont_block || this.stopping) {
      const events = this.eventsOf(r.queue_id, await this.poll(r.queue_id, r.actor.user_id, r.last_event_id, { mode: 'ack', guest: isGuest(r.actor) }));
      return events.length > 0 || r.dont_block ? { events_json: eventsJson(events) } : noEvents(r.queue_id);
    }
    return this.park(r, deadline);
  }

  private poll(queueId: string, userId: number, lastEventId: number, o: Omit<Parameters<QueueStore['poll']>[3], 'max'>): Promise<PollResult> {
    return this.deps.store.poll(queueId, userId, lastEventId, { max: MAX_EVENTS_PER_REPLY, ...o });
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
    if ((r.status === 'ok' || r.status === 'parked') && !(await this.deps.registry.isCurrent(r.epoch))) throw badEventQueueId(queueId);
  }

  /**
   * Acknowledges, then answers at once if events wait, else parks. The poll is listed here
   * before Redis is asked, so a wake that comes meanwhile is not missed: its re-read reaches
   * Redis after the park on the same connection.
   */
  private park(r: GetEventsRequest, deadline?: number): Promise<GetEventsReply> {
    return new Promise<GetEventsReply>((resolve, reject) => {
      const p: Parked = {
        queueId: r.queue_id,
        userId: r.actor.user_id,
        guest: isGuest(r.actor),
        lastEventId: r.last_event_id,
        generation: 0,
        reading: false,
        wokenWhileReading: false,
        done: false,
        resolve,
        reject,
      };
      const older = this.parked.get(p.queueId);
      if (older) this.finish(older, noEvents(older.queueId));
      this.parked.set(p.queueId, p);
      void (async () => {
        const res = await this.poll(p.queueId, p.userId, p.lastEventId, {
          mode: 'park',
          nowMs: Date.now(),
          parkTtlExtraMs: PARK_TTL_SLACK_MS,
          replica: this.replicaId,
          guest: p.guest,
        });
        await this.assertCurrentEpoch(p.queueId, res);
        if (res.status !== 'parked') {
          // Events were waiting: an immediate answer, without queue_id (Zulip's shape).
          const events = this.eventsOf(p.queueId, res);
          this.finish(p, { events_json: eventsJson(events) });
          return;
        }
        if (p.done) return;
        p.generation = res.generation;
        // A poll parked on another replica is ended there; ours were ended above.
        if (res.previousParker !== '' && res.previousParker !== this.replicaId) {
          this.publish({ supplant: { queue_id: p.queueId, generation: res.generation } });
        }
        const heartbeatIn = Math.min(this.deps.config.heartbeatMs(), deadline !== undefined ? deadline - Date.now() - HEARTBEAT_BEFORE_DEADLINE_MS : Infinity);
        p.timer = setTimeout(() => void this.heartbeat(p), Math.max(0, heartbeatIn));
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
            this.finish(p, { events_json: eventsJson(events), queue_id: p.queueId });
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
    this.end(p);
    p.reject(e);
  }

  private finish(p: Parked, reply: GetEventsReply): void {
    if (p.done) return;
    this.end(p);
    p.resolve(reply);
  }

  private end(p: Parked): void {
    p.done = true;
    if (p.timer) clearTimeout(p.timer);
    if (this.parked.get(p.queueId) === p) this.parked.delete(p.queueId);
  }
}

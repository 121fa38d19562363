/**
 * What a gateway knows of the queues its polls come to, so that a busy client's polls need not
 * each go to Redis (PollHub). Under load a client polls again as soon as it has an answer, about
 * once per delivered event, and each poll cost a script in Redis and a round trip from the
 * gateway (on this project's 2-vCPU machine, about a fifth of the CPU of a delivery, most of it
 * in the two processes' socket writes and wake-ups). The wakes already bring every gateway the
 * events appended (EventsBroadcast `appended`), so between two reads of a queue in Redis the
 * gateway can tell on its own whether events wait for a poll, and which.
 *
 * A queue's tail holds:
 * - who may read it, as Redis last said when it answered a poll of it here (`checkedAt`): user,
 *   role, the credential tokens the script compared, the registry epoch and the poll generation;
 * - the events the wakes carried since the poll arrived here (`first`, `events`), each with its
 *   exact id, so they are the queue's own whatever came before or after them;
 * - `frontier`: when known, the newest id this gateway is sure of: every event of the queue after
 *   it will arrive in a wake still to come. Redis sets it (nothing after the id it answered up
 *   to, at its read), and contiguous wakes move it on. A wake without this queue's events, or
 *   events that do not follow on, make it unknown until Redis is read again; so does one that
 *   came while a read was on its way, since it may be about events the read did not see.
 *
 * PollHub answers from the tail, without Redis, only while Redis answered a poll of the queue
 * here less than TAIL_FRESH_MS ago, for the same user, role and tokens, in the current epoch:
 * - events wait after last_event_id: it answers with the known run of them (a prefix of what
 *   the queue holds; a wake on its way adds to it later);
 * - the client has everything up to the frontier: it parks the poll here without Redis, to be
 *   ended as a parked poll is (the next wake, a heartbeat, a newer poll, the client leaving).
 * What only Redis does waits for the next poll that reaches it, at most TAIL_FRESH_MS later
 * while the client keeps polling: the acknowledgement (the queue keeps events the client has
 * seen, as it does between two polls), the idle clock and the queue's life (which the last park
 * in Redis set to its lifespan plus PARK_TTL_SLACK_MS, longer than a heartbeat's wait), and the
 * checks of the queue's existence and of the credentials (a queue deleted or credentials
 * changed elsewhere can be answered from here for TAIL_FRESH_MS more, with events that were
 * appended to it; a poll woken by a wake is answered from it unchecked already).
 */
import type { WakeAppended } from '../contracts/index.js';
import { withId } from './with-id.js';

/** How long after Redis last answered a poll of a queue here its tail may answer for Redis. */
const TAIL_FRESH_MS = 200;
/** A queue's tail is dropped when no poll of it has come here for this long. */
export const TAIL_IDLE_MS = 2_000;
/**
 * A poll parks here without Redis only this long after the queue's last park in Redis, which
 * gave it its lifespan plus 90 s: a read that finds events does not lengthen its life, so a client
 * always behind would otherwise see its queue expire.
 */
const LOCAL_PARK_WITHIN_MS = 30_000;

/** The poll a tail is asked about (PollRequest's fields). */
export interface TailPoll {
  queueId: string;
  userId: number;
  guest: boolean;
  lastEventId: number;
  expect?: { keys: readonly string[]; values: readonly string[] } | undefined;
}

interface Tail {
  userId: number;
  guest: boolean;
  /** The credential tokens Redis compared at the last check, joined; '' for none. */
  tokens: string;
  epoch: string;
  /** The poll generation Redis last counted for a park of this queue here (0: none), and when. */
  generation: number;
  parkedAt: number;
  /** When Redis last answered a poll of this queue here (performance.now(); -Infinity: never). */
  checkedAt: number;
  /** When a poll of this queue last came here. */
  polledAt: number;
  /** The highest last_event_id seen here since the last check (older ones are Redis's to judge). */
  acked: number;
  /** Ids of `events` are first, first + 1, ...; with none, `first` is frontier + 1 when that is known. */
  first: number;
  events: string[];
  bytes: number;
  /** See the file comment; undefined while unknown. */
  frontier: number | undefined;
  /** Counts the wakes that made the frontier unknown, so a read in flight meanwhile is not trusted for it. */
  blind: number;
}

const tokensOf = (expect: TailPoll['expect']) => (expect ? `${expect.keys.join('\u0000')}\u0001${expect.values.join('\u0000')}` : '');

/** A read of the queue in Redis, as PollHub had it answered. */
export type TailRead =
  /** Nothing after last_event_id: the poll parked under `generation`. */
  | { kind: 'parked'; epoch: string; generation: number }
  /** Events after last_event_id; `complete` unless Redis stopped at its maximum. */
  | { kind: 'events'; epoch: string; newestId: number; complete: boolean };

export class QueueTails {
  private readonly tails = new Map<string, Tail>();

  constructor(
    /** `freshMs`: TAIL_FRESH_MS unless given (tests whose steps may be slower than it on a loaded machine). */
    private readonly limits: { maxEvents: number; maxBytes: number; freshMs?: number },
    private readonly isCurrentEpoch: (epoch: string) => boolean,
  ) {}

  /**
   * A poll has come: its queue's tail, created if new (from now on the wakes are kept for it),
   * and whether it may be answered from it, having taken its acknowledgement into account.
   * Returns the state to hand back to `read` if the poll goes to Redis.
   */
  arrive(r: TailPoll, now: number): { trusted: boolean; blind: number } {
    const tail = this.tails.get(r.queueId);
    if (!tail) {
      this.start(r, now);
      return { trusted: false, blind: 0 };
    }
    tail.polledAt = now;
    const same = tail.userId === r.userId && tail.guest === r.guest && tail.tokens === tokensOf(r.expect);
    // An older last_event_id than one seen here is for Redis to judge (pruned, or a client confused).
    if (!same || r.lastEventId < tail.acked) return { trusted: false, blind: tail.blind };
    tail.acked = r.lastEventId;
    dropThrough(tail, r.lastEventId);
    const trusted = now - tail.checkedAt <= (this.limits.freshMs ?? TAIL_FRESH_MS) && this.isCurrentEpoch(tail.epoch);
    return { trusted, blind: tail.blind };
  }

  /** The events after a trusted poll's last_event_id, as its answer's JSON texts; none when not known. */
  waiting(r: TailPoll): string[] {
    const tail = this.tails.get(r.queueId);
    if (!tail || tail.events.length === 0 || tail.first !== r.lastEventId + 1) return [];
    const out: string[] = [];
    let bytes = 0;
    for (const json of tail.events) {
      bytes += json.length;
      if (out.length >= this.limits.maxEvents || (out.length > 0 && bytes > this.limits.maxBytes)) break;
      out.push(withId(tail.first + out.length, json));
    }
    return out;
  }

  /**
   * Whether a trusted poll with nothing waiting may park here without Redis: the client has every
   * event up to the frontier. Returns the generation and epoch to park under.
   */
  parkable(r: TailPoll, now: number): { generation: number; epoch: string } | undefined {
    const tail = this.tails.get(r.queueId);
    if (!tail || tail.frontier !== r.lastEventId || tail.events.length > 0 || tail.generation === 0) return undefined;
    if (now - tail.parkedAt > LOCAL_PARK_WITHIN_MS) return undefined;
    return { generation: tail.generation, epoch: tail.epoch };
  }

  /** Redis answered the poll `r` (its queue belongs to the caller, in the current epoch). `blind` is what `arrive` returned. */
  read(r: TailPoll, blind: number, res: TailRead, now: number): void {
    // Dropped meanwhile (the bus was away, or the tail idle): what the read says starts a new one.
    const tail = this.tails.get(r.queueId) ?? this.start(r, now);
    if (tail.epoch !== res.epoch) tail.generation = 0;
    Object.assign(tail, { userId: r.userId, guest: r.guest, tokens: tokensOf(r.expect), epoch: res.epoch, checkedAt: now, polledAt: now, acked: r.lastEventId });
    if (res.kind === 'parked') {
      tail.generation = res.generation;
      tail.parkedAt = now;
    }
    dropThrough(tail, r.lastEventId);
    // Complete up to `upTo` at the read; the run kept since holds what came after, if it follows on.
    const upTo = res.kind === 'parked' ? r.lastEventId : res.complete ? res.newestId : undefined;
    if (upTo === undefined || blind !== tail.blind) {
      tail.frontier = undefined;
      return;
    }
    dropThrough(tail, upTo);
    if (tail.events.length === 0) {
      tail.first = upTo + 1;
      tail.frontier = upTo;
    } else {
      tail.frontier = tail.first <= upTo + 1 ? tail.first + tail.events.length - 1 : undefined;
    }
  }

  /** A wake came for the queue, with its events if it carried them. */
  woken(queueId: string, appended: WakeAppended | undefined): void {
    const tail = this.tails.get(queueId);
    if (!tail) return;
    const mine = appended?.queues[queueId];
    const blinded = () => {
      tail.frontier = undefined;
      tail.blind++;
    };
    if (!mine || !appended) return blinded();
    const first = mine[0] as number;
    const next = tail.first + tail.events.length;
    // Ids below `next` are known here or acknowledged already (a wake can come after the read
    // that returned its events): an id always names the same event of the queue, so they are skipped.
    if (first > next) {
      // Events between are unknown: the run starts anew with these.
      blinded();
      tail.first = first;
      tail.events = [];
      tail.bytes = 0;
    }
    for (let k = Math.max(1, next - first + 1); k < mine.length; k++) {
      const json = appended.json[mine[k] as number];
      if (json === undefined) {
        this.tails.delete(queueId);
        return;
      }
      tail.events.push(json);
      tail.bytes += json.length;
    }
    if (tail.frontier !== undefined) tail.frontier = tail.first + tail.events.length - 1;
    // A client far behind reads from Redis; only the newest events are kept.
    let drop = 0;
    while (drop < tail.events.length - 1 && (tail.bytes > this.limits.maxBytes || tail.events.length - drop > this.limits.maxEvents)) {
      tail.bytes -= (tail.events[drop] as string).length;
      drop++;
    }
    if (drop > 0) {
      tail.events.splice(0, drop);
      tail.first += drop;
    }
  }

  /** A new tail for a poll's queue: nothing relied on until Redis has answered. */
  private start(r: TailPoll, now: number): Tail {
    const tail: Tail = { userId: r.userId, guest: r.guest, tokens: '', epoch: '', generation: 0, parkedAt: -Infinity, checkedAt: -Infinity, polledAt: now, acked: r.lastEventId, first: r.lastEventId + 1, events: [], bytes: 0, frontier: undefined, blind: 0 };
    this.tails.set(r.queueId, tail);
    return tail;
  }

  /** Drops a queue's tail (deleted through this gateway, or failed). */
  forget(queueId: string): void {
    this.tails.delete(queueId);
  }

  /** Drops the tails of queues no poll came to since `idleSince`. */
  sweep(idleSince: number): void {
    for (const [queueId, tail] of this.tails) if (tail.polledAt < idleSince) this.tails.delete(queueId);
  }

  clear(): void {
    this.tails.clear();
  }
}

/** Drops a tail's events up to and including id `last` (acknowledged, or known otherwise). */
function dropThrough(tail: Tail, last: number): void {
  const n = Math.min(tail.events.length, last + 1 - tail.first);
  if (n <= 0) return;
  for (let k = 0; k < n; k++) tail.bytes -= (tail.events[k] as string).length;
  tail.events.splice(0, n);
  tail.first += n;
}

/**
 * The poll side of the event queues in Redis (see keys.ts and lua.ts): GET /events's
 * acknowledgement, park and re-read, the heartbeat event, the release of a park, and the
 * registry epoch a queue must belong to.
 */
import type { Redis } from '../redis/index.js';
import { RedisBatch, resultValue } from '../redis/index.js';
import { queueKeys, registryKey } from './keys.js';
import { HEARTBEAT, POLL, RELEASE } from './lua.js';

export type PollMode = 'ack' | 'park' | 'wake';

export type PollResult =
  | { status: 'ok'; epoch: string; events: Array<{ id: number; json: string }> }
  | { status: 'parked'; epoch: string; generation: number; previousParker: string }
  | { status: 'gone' | 'overflowed' }
  | { status: 'pruned' | 'missing'; id: number }
  /** A key of `PollOptions.expect` held another value: nothing was done. */
  | { status: 'unexpected' };

export interface PollOptions {
  mode: PollMode;
  max: number;
  nowMs?: number;
  /** Mode 'park': how much longer than its lifespan the queue lives while parked. */
  parkTtlExtraMs?: number;
  /** Mode 'park': who parks (a gateway's id), told to the next poll that parks. */
  parker?: string;
  /** Mode 'wake': the parked poll's generation. */
  generation?: number;
  /** The poller's current role is guest, so an all_public_streams queue of theirs is dropped. */
  guest?: boolean;
  /**
   * Poll only if these keys hold these values ('' for none): a cached API key's credential
   * tokens, so the poll's round trip is also its authentication. Those keys are outside the
   * queue's hash slot: one Redis (or a primary with replicas) serves that, a Cluster would not.
   */
  expect?: { keys: readonly string[]; values: readonly string[] };
}

/** Scripts over the queue's two keys; POLL takes a variable number (its first argument is their count). */
const SCRIPTS = { zcEvqRelease: RELEASE, zcEvqHeartbeat: HEARTBEAT } as const;
const VARIADIC_SCRIPTS = { zcEvqPoll: POLL } as const;
type Scripted = Record<keyof typeof SCRIPTS | keyof typeof VARIADIC_SCRIPTS, (...args: Array<string | number>) => unknown>;

export class PollStore {
  /**
   * Every poll, heartbeat and release goes through one pipeline per event-loop turn: when a
   * message lands, every parked poll of its recipients re-reads at once, and their scripts
   * reach Redis as one write. They all go this way, so those of one queue stay in order.
   */
  private readonly batch: RedisBatch;
  /** The registry epoch last read: asked of Redis again only when a queue names another. */
  private knownEpoch: string | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys: 2, lua });
    }
    for (const [name, lua] of Object.entries(VARIADIC_SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
    this.batch = new RedisBatch(redis);
  }

  private async batched(name: keyof Scripted, ...args: Array<string | number>): Promise<unknown> {
    const [r] = await this.batch.run((p) => void (p as unknown as Scripted)[name](...args));
    return resultValue(r);
  }

  /** See POLL. */
  async poll(queueId: string, userId: number, lastEventId: number, o: PollOptions): Promise<PollResult> {
    const expect = o.expect ?? { keys: [], values: [] };
    if (expect.keys.length !== expect.values.length) throw new Error('event queue poll: one expected value per key');
    const r = (await this.batched(
      'zcEvqPoll',
      2 + expect.keys.length,
      ...queueKeys(this.prefix, queueId),
      ...expect.keys,
      userId,
      lastEventId,
      o.max,
      o.mode,
      o.nowMs ?? Date.now(),
      o.parkTtlExtraMs ?? 0,
      o.parker ?? '',
      o.generation ?? 0,
      o.guest === true ? 1 : 0,
      ...expect.values,
    )) as string[];
    const status = r[0];
    if (status === 'unexpected') return { status };
    if (status === 'pruned' || status === 'missing') return { status, id: Number(r[1]) };
    if (status === 'parked') return { status, epoch: r[1] as string, generation: Number(r[2]), previousParker: r[3] as string };
    if (status !== 'ok') return { status: status === 'overflowed' ? 'overflowed' : 'gone' };
    const events: Array<{ id: number; json: string }> = [];
    for (let i = 2; i + 1 < r.length; i += 2) {
      events.push({ id: Number.parseInt(r[i] as string, 10), json: r[i + 1] as string });
    }
    return { status: 'ok', epoch: r[1] as string, events };
  }

  /** A parked poll of `generation` ended without events; -1 if the queue is dead. */
  async release(queueId: string, nowMs: number, generation: number): Promise<number> {
    return Number(await this.batched('zcEvqRelease', ...queueKeys(this.prefix, queueId), nowMs, generation));
  }

  /** Appends a heartbeat event; its id, or -1 if the queue is dead. */
  async heartbeat(queueId: string): Promise<number> {
    return Number(await this.batched('zcEvqHeartbeat', ...queueKeys(this.prefix, queueId)));
  }

  /** Whether `epoch` is the registry's current one as last read (no round trip; false when unsure). */
  isKnownCurrentEpoch(epoch: string): boolean {
    return epoch === this.knownEpoch;
  }

  /**
   * Whether `epoch` is the registry's current one: a queue of an older epoch outlived the
   * loss of the dataset it belonged to and is unknown to clients (see the events service's
   * registry).
   */
  async isCurrentEpoch(epoch: string): Promise<boolean> {
    if (this.isKnownCurrentEpoch(epoch)) return true;
    this.knownEpoch = (await this.redis.hget(registryKey(this.prefix), 'epoch')) ?? undefined;
    return epoch === this.knownEpoch;
  }
}

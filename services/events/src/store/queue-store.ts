/**
 * The events service's side of the event queues in Redis (@zc/shared/event-queues has the key
 * layout and the poll side, which the gateway runs): the registry, the leader lock, a queue's
 * creation, /register's end, deletion, and the appends. Both queue keys carry a TTL (the
 * queue's idle lifespan), refreshed when a poll parks or ends, so Redis itself expires idle
 * queues. The appender reads many users' indexes at once (MEMBERS_OF_MANY) and appends to many
 * queues at once (APPEND): those need one Redis, not a Cluster.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from '@zc/shared/redis';
import { indexGenerationKey, leaderKey, leaderTermKey, queueKeys, queueMetaKey, queueMetaPattern, queueStreamKey, realmPublicQueuesKey, registryKey, userQueuesKey } from '@zc/shared/event-queues';
import type { NarrowTerm } from '../lib/narrow.js';
import * as lua from './scripts.js';

/** What never changes during a queue's life: who owns it and what it wants. */
export interface QueueSettings {
  userId: number;
  realmId: number;
  /** null: every event type. */
  eventTypes: string[] | null;
  narrow: NarrowTerm[];
  applyMarkdown: boolean;
  clientGravatar: boolean;
  allPublicStreams: boolean;
  capabilities: Record<string, boolean>;
}

export interface NewQueue extends QueueSettings {
  queueId: string;
  lifespanMs: number;
  /** Until its first poll the queue lives at most this long (a never-polled queue is collected soon). */
  firstPollWithinMs?: number;
  epoch: string;
}

/** One event for one queue, as the appender hands it over. */
export interface QueuedEvent {
  seq: number;
  origin: string;
  txid: string;
  json: string;
}

type ScriptFn = (...args: Array<string | number>) => Promise<unknown>;
type Scripted = Record<string, ScriptFn>;

const SCRIPTS = {
  zcEvqCreate: [2, lua.CREATE],
  zcEvqFinishRegister: [2, lua.FINISH_REGISTER],
  zcEvqDelete: [2, lua.DELETE],
  zcEvqEnsureRegistry: [1, lua.ENSURE_REGISTRY],
  zcEvqAdvanceCursor: [1, lua.ADVANCE_CURSOR],
  zcEvqRenewLock: [1, lua.RENEW_LOCK],
  zcEvqAcquireLock: [2, lua.ACQUIRE_LOCK],
  zcEvqClaimRegistry: [1, lua.CLAIM_REGISTRY],
  zcEvqReleaseLock: [1, lua.RELEASE_LOCK],
} as const;

/** Read-only script over a variable number of keys (its first argument is their count). */
const VARIADIC_SCRIPTS = { zcEvqMembersOfMany: lua.MEMBERS_OF_MANY, zcEvqAppend: lua.APPEND } as const;

/**
 * Queues and events one APPEND call takes at most: a script blocks Redis while it runs,
 * so a fan-out to thousands of queues goes as several calls (in one pipeline still).
 */
const APPEND_CALL_QUEUES = 200;
const APPEND_CALL_EVENTS = 2_000;

const INDEX_TTL_SLACK_MS = 24 * 3600 * 1000;

/**
 * The user and realm indexes' generation: a fresh random token written with every change of
 * any index (never a counter, which could come back to a value after Redis lost its data).
 * The appender keeps the indexes it read with the token it read first, and checks the token in
 * the pipeline of its appends (see Appender.route).
 */
export type IndexGeneration = string | null;

/** Queue ids by user and by realm (all_public_streams queues), read under one index generation. */
export interface QueueIndexes {
  byUser: Map<number, string[]>;
  byRealm: Map<number, string[]>;
  /** The generation read before the indexes: if it is still current, so are they. */
  generation: IndexGeneration;
}

const SETTINGS_FIELDS = ['user_id', 'realm_id', 'event_types', 'narrow', 'apply_markdown', 'client_gravatar', 'all_public_streams', 'capabilities'] as const;

export class QueueStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    for (const [name, [numberOfKeys, source]] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua: source });
    }
    for (const [name, source] of Object.entries(VARIADIC_SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua: source });
    }
  }

  /** Live event queues (one meta key each), counted with SCAN: O(keys), for a gauge read rarely. */
  async countQueues(): Promise<number> {
    let n = 0;
    const pattern = queueMetaPattern(this.prefix);
    for await (const keys of this.redis.scanStream({ match: pattern, count: 1000 }) as AsyncIterable<string[]>) n += keys.length;
    return n;
  }

  private get scripts(): Scripted {
    return this.redis as unknown as Scripted;
  }

  metaKey(queueId: string): string {
    return queueMetaKey(this.prefix, queueId);
  }
  streamKey(queueId: string): string {
    return queueStreamKey(this.prefix, queueId);
  }
  private queueKeys(queueId: string): [string, string] {
    return queueKeys(this.prefix, queueId);
  }
  private userIndexKey(userId: number): string {
    return userQueuesKey(this.prefix, userId);
  }
  private publicIndexKey(realmId: number): string {
    return realmPublicQueuesKey(this.prefix, realmId);
  }
  private get indexGenerationKey(): string {
    return indexGenerationKey(this.prefix);
  }
  get registryKey(): string {
    return registryKey(this.prefix);
  }
  get leaderKey(): string {
    return leaderKey(this.prefix);
  }
  get termKey(): string {
    return leaderTermKey(this.prefix);
  }

  // --- registry and leadership -------------------------------------------------------------

  /** The registry's epoch and cursor, creating it (with these values) if the dataset has none. */
  async ensureRegistry(freshEpoch: string, cursor: number): Promise<{ epoch: string; cursor: number }> {
    const [epoch, c] = (await this.scripts.zcEvqEnsureRegistry(this.registryKey, freshEpoch, cursor)) as [string, string];
    return { epoch, cursor: Number(c) };
  }

  async readRegistry(): Promise<{ epoch: string; cursor: number } | undefined> {
    const [epoch, cursor] = await this.redis.hmget(this.registryKey, 'epoch', 'cursor');
    return epoch ? { epoch, cursor: Number(cursor) } : undefined;
  }

  async deleteRegistry(): Promise<void> {
    await this.redis.del(this.registryKey);
  }

  /** 'reset' when the registry's epoch changed (start over), 'fenced' when a newer leader claimed it. */
  async advanceCursor(epoch: string, seq: number, term: number): Promise<CursorMove> {
    return cursorMove(Number(await this.scripts.zcEvqAdvanceCursor(this.registryKey, epoch, seq, term)));
  }

  /** A new leader's first write: from now on no older term can move the cursor. False if a newer term did already. */
  async claimRegistry(term: number): Promise<boolean> {
    return Number(await this.scripts.zcEvqClaimRegistry(this.registryKey, term)) === 1;
  }

  /** The new leadership term if the lock was free, else undefined. */
  async acquireLock(token: string, ttlMs: number): Promise<number | undefined> {
    const term = Number(await this.scripts.zcEvqAcquireLock(this.leaderKey, this.termKey, token, ttlMs, Date.now()));
    return term > 0 ? term : undefined;
  }
  async renewLock(token: string, ttlMs: number): Promise<boolean> {
    return (await this.scripts.zcEvqRenewLock(this.leaderKey, token, ttlMs)) === 1;
  }
  async releaseLock(token: string): Promise<void> {
    await this.scripts.zcEvqReleaseLock(this.leaderKey, token);
  }

  // --- queue lifecycle ---------------------------------------------------------------------

  /** Creates the queue's keys and indexes it; false if the id is taken (never, for random ids). */
  async create(q: NewQueue, nowMs: number): Promise<boolean> {
    const fields: Record<string, string | number> = {
      user_id: q.userId,
      realm_id: q.realmId,
      event_types: q.eventTypes === null ? '' : JSON.stringify(q.eventTypes),
      narrow: JSON.stringify(q.narrow),
      apply_markdown: q.applyMarkdown ? 1 : 0,
      client_gravatar: q.clientGravatar ? 1 : 0,
      all_public_streams: q.allPublicStreams ? 1 : 0,
      capabilities: JSON.stringify(q.capabilities),
      lifespan_ms: q.lifespanMs,
      epoch: q.epoch,
      created: nowMs,
      last_connection: nowMs,
      next_id: 0,
      pruned: -1,
      last_seq: 0,
      poll_gen: 0,
    };
    const ttl = Math.min(q.lifespanMs, q.firstPollWithinMs ?? q.lifespanMs);
    const created = (await this.scripts.zcEvqCreate(...this.queueKeys(q.queueId), ttl, ...Object.entries(fields).flat())) === 1;
    if (!created) return false;
    // The indexes outlive their longest-lived queue, then vanish if nobody registers again.
    const indexTtl = q.lifespanMs + INDEX_TTL_SLACK_MS;
    const m = this.redis.multi();
    for (const key of [this.userIndexKey(q.userId), ...(q.allPublicStreams ? [this.publicIndexKey(q.realmId)] : [])]) {
      m.sadd(key, q.queueId).pexpire(key, indexTtl, 'NX').pexpire(key, indexTtl, 'GT');
    }
    await m.set(this.indexGenerationKey, randomUUID()).exec();
    return true;
  }

  /** The user's live queue ids; ids of queues that died are removed from the index. */
  async liveQueuesOf(userId: number): Promise<string[]> {
    const ids = await this.redis.smembers(this.userIndexKey(userId));
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.exists(this.metaKey(id), this.streamKey(id));
    const res = (await p.exec()) ?? [];
    const dead = ids.filter((_, i) => Number(res[i]?.[1]) !== 2);
    if (dead.length) await this.redis.multi().srem(this.userIndexKey(userId), ...dead).set(this.indexGenerationKey, randomUUID()).exec();
    return ids.filter((_, i) => Number(res[i]?.[1]) === 2);
  }

  async removeFromIndexes(queueId: string, s: Pick<QueueSettings, 'userId' | 'realmId'>): Promise<void> {
    await this.redis
      .multi()
      .srem(this.userIndexKey(s.userId), queueId)
      .srem(this.publicIndexKey(s.realmId), queueId)
      .set(this.indexGenerationKey, randomUUID())
      .exec();
  }

  /** See FINISH_REGISTER; returns last_event_id, or undefined if the queue died meanwhile. */
  async finishRegister(queueId: string, snapshots: Record<string, string>): Promise<number | undefined> {
    const pairs = Object.entries(snapshots).flat();
    const r = Number(await this.scripts.zcEvqFinishRegister(...this.queueKeys(queueId), Object.keys(snapshots).length, ...pairs));
    return r === -2 ? undefined : r;
  }

  /** Deletes the queue if `userId` owns it; false if it did not exist (or was not theirs). */
  async delete(queueId: string, userId: number): Promise<boolean> {
    const settings = (await this.settingsOf([queueId])).get(queueId);
    const ok = Number(await this.scripts.zcEvqDelete(...this.queueKeys(queueId), userId)) === 1;
    if (settings && settings.userId === userId) await this.removeFromIndexes(queueId, settings);
    return ok;
  }

  // --- delivery ----------------------------------------------------------------------------

  /**
   * Queue ids indexed for each user and, for each realm, its all_public_streams queues (may
   * include dead ones; appends to those are refused), and the index generation read just
   * before them: one pipeline, one round trip.
   */
  async queuesOf(userIds: readonly number[], publicRealmIds: readonly number[] = []): Promise<QueueIndexes> {
    const byUser = new Map<number, string[]>();
    const byRealm = new Map<number, string[]>();
    // One command however many recipients (see MEMBERS_OF_MANY).
    const keys = [...userIds.map((id) => this.userIndexKey(id)), ...publicRealmIds.map((id) => this.publicIndexKey(id))];
    const p = this.redis.pipeline() as unknown as Scripted & { get(key: string): unknown; exec(): Promise<Array<[Error | null, unknown]> | null> };
    p.get(this.indexGenerationKey);
    if (keys.length) p.zcEvqMembersOfMany(keys.length, ...keys);
    const [gen, members] = (await p.exec()) ?? [];
    if (gen?.[0]) throw gen[0];
    if (members?.[0]) throw members[0];
    const res = (members?.[1] ?? []) as string[][];
    userIds.forEach((id, i) => byUser.set(id, res[i] ?? []));
    publicRealmIds.forEach((id, i) => byRealm.set(id, res[userIds.length + i] ?? []));
    return { byUser, byRealm, generation: (gen?.[1] ?? null) as IndexGeneration };
  }

  async queuesOfUsers(userIds: readonly number[]): Promise<Map<number, string[]>> {
    return (await this.queuesOf(userIds)).byUser;
  }

  async publicQueuesOfRealms(realmIds: readonly number[]): Promise<Map<number, string[]>> {
    return (await this.queuesOf([], realmIds)).byRealm;
  }

  /** The settings of each queue, or null for a queue whose meta is gone. */
  async settingsOf(queueIds: readonly string[]): Promise<Map<string, QueueSettings | null>> {
    const out = new Map<string, QueueSettings | null>();
    if (queueIds.length === 0) return out;
    const p = this.redis.pipeline();
    for (const id of queueIds) p.hmget(this.metaKey(id), ...SETTINGS_FIELDS);
    const res = (await p.exec()) ?? [];
    queueIds.forEach((id, i) => {
      const v = res[i]?.[1] as Array<string | null> | undefined;
      out.set(id, v && v[0] !== null ? parseSettings(v) : null);
    });
    return out;
  }

  /** Appends each queue's events (APPEND calls, pipelined), fenced by `term`; see APPEND for results. */
  async append(perQueue: ReadonlyMap<string, readonly QueuedEvent[]>, limits: { maxEvents: number; maxBytes: number }, term: number): Promise<Map<string, number>> {
    return (await this.appendAndAdvance(perQueue, limits, term)).appended;
  }

  /**
   * `append`, and in the same pipeline (one round trip) the registry cursor moved to
   * `cursor.seq`: the appender moves it past a batch it has already applied everywhere
   * while it appends the next one (see Appender). Without `cursor`, only the appends.
   * `generation`: the index generation as Redis has it just before the appends. `newestIds`:
   * the id of each queue's newest event, for the queues that got some.
   */
  async appendAndAdvance(
    perQueue: ReadonlyMap<string, readonly QueuedEvent[]>,
    limits: { maxEvents: number; maxBytes: number },
    term: number,
    cursor?: { epoch: string; seq: number },
  ): Promise<{ appended: Map<string, number>; newestIds: Map<string, number>; cursor?: CursorMove; generation: IndexGeneration }> {
    const appended = new Map<string, number>();
    const newestIds = new Map<string, number>();
    const p = this.redis.pipeline() as unknown as Scripted & { get(key: string): unknown; exec(): Promise<Array<[Error | null, unknown]> | null> };
    p.get(this.indexGenerationKey);
    if (cursor) p.zcEvqAdvanceCursor(this.registryKey, cursor.epoch, cursor.seq, term);
    const calls = appendCalls(perQueue);
    for (const call of calls) {
      const keys = call.queueIds.flatMap((id) => this.queueKeys(id));
      p.zcEvqAppend(keys.length, ...keys, term, limits.maxEvents, limits.maxBytes, call.events.length / 4, ...call.events, ...call.perQueue);
    }
    const res = (await p.exec()) ?? [];
    const reply = (i: number) => {
      const [err, v] = res[i] ?? [new Error('no reply'), undefined];
      if (err) throw err;
      return v;
    };
    const generation = (reply(0) ?? null) as IndexGeneration;
    const first = cursor ? 2 : 1;
    calls.forEach((call, i) => {
      const results = reply(first + i) as unknown[];
      call.queueIds.forEach((id, j) => {
        const n = Number(results[j * 2]);
        appended.set(id, n);
        if (n > 0) newestIds.set(id, Number(results[j * 2 + 1]));
      });
    });
    return cursor ? { appended, newestIds, cursor: cursorMove(Number(reply(1))), generation } : { appended, newestIds, generation };
  }
}

/** One APPEND call: its queues, its distinct events (seq, origin, txid, JSON each) and per queue its events' numbers. */
interface AppendCall {
  queueIds: string[];
  events: Array<string | number>;
  perQueue: string[];
}

/**
 * Splits the appends into APPEND calls, each event sent once per call: the appender hands one
 * QueuedEvent object to every queue that gets those bytes, and equal JSON in different objects
 * is matched by its text.
 */
function appendCalls(perQueue: ReadonlyMap<string, readonly QueuedEvent[]>): AppendCall[] {
  const calls: AppendCall[] = [];
  let call: AppendCall | undefined;
  let numbers = new Map<QueuedEvent, number>();
  let byText = new Map<string, Array<{ e: QueuedEvent; n: number }>>();
  let listed = 0;
  const numberOf = (c: AppendCall, e: QueuedEvent): number => {
    let n = numbers.get(e);
    if (n !== undefined) return n;
    const same = byText.get(e.json);
    n = same?.find((x) => x.e.seq === e.seq && x.e.origin === e.origin && x.e.txid === e.txid)?.n;
    if (n === undefined) {
      c.events.push(e.seq, e.origin, e.txid, e.json);
      n = c.events.length / 4;
      if (same) same.push({ e, n });
      else byText.set(e.json, [{ e, n }]);
    }
    numbers.set(e, n);
    return n;
  };
  for (const [queueId, list] of perQueue) {
    if (!call || call.queueIds.length >= APPEND_CALL_QUEUES || (listed > 0 && listed + list.length > APPEND_CALL_EVENTS)) {
      call = { queueIds: [], events: [], perQueue: [] };
      calls.push(call);
      numbers = new Map();
      byText = new Map();
      listed = 0;
    }
    const c = call;
    c.queueIds.push(queueId);
    c.perQueue.push(list.map((e) => numberOf(c, e)).join(','));
    listed += list.length;
  }
  return calls;
}

export type CursorMove = 'ok' | 'reset' | 'fenced';

const cursorMove = (r: number): CursorMove => (r === 1 ? 'ok' : r === -3 ? 'fenced' : 'reset');

function parseSettings(v: Array<string | null>): QueueSettings {
  const [userId, realmId, eventTypes, narrow, applyMarkdown, clientGravatar, allPublicStreams, capabilities] = v;
  return {
    userId: Number(userId),
    realmId: Number(realmId),
    eventTypes: eventTypes ? (JSON.parse(eventTypes) as string[]) : null,
    narrow: narrow ? (JSON.parse(narrow) as NarrowTerm[]) : [],
    applyMarkdown: applyMarkdown === '1',
    clientGravatar: clientGravatar === '1',
    allPublicStreams: allPublicStreams === '1',
    capabilities: capabilities ? (JSON.parse(capabilities) as Record<string, boolean>) : {},
  };
}

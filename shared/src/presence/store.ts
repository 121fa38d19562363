/**
 * Presence lives in Redis, not PostgreSQL: it is the most frequent write of a chat server
 * (every open client, every minute) and it is soft state, which Zulip's clients rebuild
 * within a ping interval if it is lost. Keys, per realm (the hash tag keeps a realm's keys
 * in one cluster slot, so each script works on Redis Cluster):
 *
 *   users:presence:{<realm>}        hash: user id -> "<active_ts>,<idle_ts>,<update_id>"
 *                                   (Zulip's last_active_time, last_connected_time, last_update_id;
 *                                   0 for a time never seen)
 *   users:presence:{<realm>}:meta   hash: seq (last update id), gen (visibility generation),
 *                                   loaded (1 once the visibility below was read from PostgreSQL),
 *                                   realm_disabled (the realm's presence_disabled)
 *   users:presence:{<realm>}:hidden set: users whose presence_enabled is false
 *   users:presence:{<realm>}:byupd  sorted set: user id scored by its entry's update id, so a
 *                                   reader holding the realm's presence asks only what changed
 *
 * meta's `base` is a random token replaced whenever entries leave the visible set otherwise
 * than by a newer update (visibility loaded or changed, a user forgotten): a reader's copy
 * taken under the current base is brought up to date by the entries updated since its seq
 * (`readSince`); under another base it is read again whole.
 *
 * The visibility (meta's realm_disabled and the hidden set) is a cache of PostgreSQL, read
 * when missing (`loaded` absent, e.g. after a Redis restart). Every change of it bumps `gen`,
 * and a load read before a change is refused (`loadVisibility` returns false), so a slow load
 * never brings back a hidden user. Scripts make each ping and read atomic, so replicas and a
 * user's several clients never interleave halfway.
 *
 * Update ids start from the time in milliseconds when `seq` is missing, so ids handed out
 * after a lost dataset stay above those clients already hold.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from '../redis/index.js';
import { RedisBatch, redisKey } from '../redis/index.js';
import { LuaScript } from './lua.js';

/** One user's stored presence; timestamps in seconds, 0 when never seen. */
export interface PresenceEntry {
  userId: number;
  activeTs: number;
  idleTs: number;
  updateId: number;
}

export type PingOutcome =
  /** One of the `expect` keys held another value: nothing was written. */
  | { kind: 'unexpected' }
  | { kind: 'unloaded' }
  | { kind: 'hidden' }
  /** A `quietOnly` ping that would have come online: nothing was written. */
  | { kind: 'announce' }
  | { kind: 'recorded'; entry: PresenceEntry; changed: boolean; cameOnline: boolean; realmDisabled: boolean };

export interface RealmPresence {
  realmDisabled: boolean;
  /** The realm's last update id (-1 when nothing was ever recorded). */
  lastUpdateId: number;
  /** Visible users' entries (hidden users left out). */
  entries: PresenceEntry[];
}

export interface PingRules {
  updateMinFrequencySeconds: number;
  offlineThresholdSeconds: number;
  legacyActivityOffsetSeconds: number;
}

/** Past this many entries updated since a reader's copy, it reads the realm whole (Lua's unpack has limits). */
const DELTA_LIMIT = 2000;

const PARSE_ENTRY = `
local function parse(v)
  local p1 = string.find(v, ',', 1, true)
  local p2 = string.find(v, ',', p1 + 1, true)
  return tonumber(string.sub(v, 1, p1 - 1)), tonumber(string.sub(v, p1 + 1, p2 - 1))
end
`;

/**
 * KEYS: presence, meta, hidden, byupd, then any keys expected to hold given values. ARGV: user
 * id, now (s), active (1/0), min frequency, offline threshold, legacy activity offset, now (ms,
 * the first seq), quiet only (1/0), then the expected values ('' for a missing key). (As a
 * function of a script with other keys and arguments, `pingFunction` says where the expected
 * keys start and how far after its key each one's value is.)
 * Returns {-3} when an expected key holds another value, {-1} unloaded, {0} hidden, {-2} when
 * quiet only and the ping comes online (nothing written in those cases), else {1, changed,
 * came_online, active_ts, idle_ts, update_id, realm_disabled}.
 *
 * Zulip's rules (do_update_user_presence): the connection time moves when it is older than the
 * minimum frequency; an active ping also moves the activity time (and the connection time with
 * it). A user "comes online" on their first ping ever, or on an active ping after being
 * offline or idle (legacy status), and only then do other users get an event.
 */
const pingFunction = (firstExpectKey: number, expectArgOffset: number) => `
local function ping()
  local pres, meta, hidden, byupd = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  for k = ${firstExpectKey}, #KEYS do
    if (redis.call('GET', KEYS[k]) or '') ~= ARGV[k + ${expectArgOffset}] then return {-3} end
  end
  if redis.call('HGET', meta, 'loaded') ~= '1' then return {-1} end
  local uid = ARGV[1]
  if redis.call('SISMEMBER', hidden, uid) == 1 then return {0} end
  local now, active = tonumber(ARGV[2]), ARGV[3] == '1'
  local minFreq, offline, offset = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
  local cur = redis.call('HGET', pres, uid)
  local creating = not cur
  local a, i, u = 0, 0, 0
  if cur then
    a, i = parse(cur)
    u = tonumber(string.sub(cur, string.find(cur, ',[^,]*$') + 1))
  end
  local wasOffline = creating or i + offline < now
  local wasIdle = creating or a + offset < i
  local na, ni = a, i
  if creating or now - i > minFreq then ni = now end
  if active and (a == 0 or now - a > minFreq) then
    na = now
    if ni < now then ni = now end
  end
  local cameOnline = creating or (active and (wasOffline or wasIdle))
  if cameOnline and ARGV[8] == '1' then return {-2} end
  local changed = creating or na ~= a or ni ~= i
  if changed then
    if redis.call('HEXISTS', meta, 'seq') == 0 then redis.call('HSET', meta, 'seq', ARGV[7]) end
    u = redis.call('HINCRBY', meta, 'seq', 1)
    redis.call('HSET', pres, uid, na .. ',' .. ni .. ',' .. u)
    redis.call('ZADD', byupd, u, uid)
  end
  local disabled = redis.call('HGET', meta, 'realm_disabled') == '1'
  return {1, changed and 1 or 0, cameOnline and 1 or 0, na, ni, u, disabled and 1 or 0}
end
`;

const PING = `${PARSE_ENTRY}${pingFunction(5, 4)}return ping()`;

/** KEYS: presence, meta, hidden. Returns {-1} unloaded, else {realm_disabled, seq, hidden ids, flat hash}. */
const READ = `
local pres, meta, hidden = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', meta, 'loaded', 'realm_disabled', 'seq')
if m[1] ~= '1' then return {-1} end
return {m[2] == '1' and 1 or 0, tonumber(m[3] or '-1'), redis.call('SMEMBERS', hidden), redis.call('HGETALL', pres)}
`;

/**
 * KEYS: presence, meta, hidden, byupd, people token (legacy.ts). ARGV: base the caller's copy was taken under ('' for
 * none), seq it is up to date with, a fresh base (stored when the realm has none yet).
 * Returns {-1} unloaded, {1} when the realm disables presence, {2, base, seq, user ids,
 * values} with the entries updated since the caller's seq when its base is current (and they
 * are few), else {0, base, seq, hidden ids, flat hash}: the whole visible realm.
 */
const READ_SINCE_FUNCTION = `
local function readSince(callerBase, callerSeq, fresh)
  local pres, meta, hidden, byupd = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
  local people = redis.call('GET', KEYS[5]) or ''
  local m = redis.call('HMGET', meta, 'loaded', 'realm_disabled', 'base', 'seq')
  if m[1] ~= '1' then return {-1} end
  if m[2] == '1' then return {1} end
  local base = m[3]
  if not base then
    base = fresh
    redis.call('HSET', meta, 'base', base)
  end
  local seq = m[4] or '-1'
  if base == callerBase then
    local ids = redis.call('ZRANGEBYSCORE', byupd, '(' .. callerSeq, '+inf', 'LIMIT', 0, ${DELTA_LIMIT})
    if #ids < ${DELTA_LIMIT} then
      local vals = {}
      if #ids > 0 then vals = redis.call('HMGET', pres, unpack(ids)) end
      return {2, base, seq, ids, vals, people}
    end
  end
  return {0, base, seq, redis.call('SMEMBERS', hidden), redis.call('HGETALL', pres), people}
end
`;

const READ_SINCE = `${READ_SINCE_FUNCTION}return readSince(ARGV[1], ARGV[2], ARGV[3])`;

/**
 * A fetch's ping, then READ_SINCE, in one script: one command and one reply for the most
 * frequent read (the realm's presence, asked with every client's ping), and the read sees the
 * ping. KEYS: presence, meta, hidden, byupd, people token, then PING's expected keys. ARGV:
 * PING's eight, READ_SINCE's three, then the expected values. Returns {ping's reply}, with
 * READ_SINCE's reply second when the ping was recorded or the user is hidden (the read is
 * wanted only then).
 */
const PING_AND_READ_SINCE = `${PARSE_ENTRY}${pingFunction(6, 6)}${READ_SINCE_FUNCTION}
local p = ping()
if p[1] ~= 1 and p[1] ~= 0 then return {p} end
return {p, readSince(ARGV[9], ARGV[10], ARGV[11])}`;

/** KEYS: presence, meta, hidden. ARGV: user id. Returns {-1} unloaded, else {realm_disabled, hidden, entry or false}. */
const READ_ONE = `
local pres, meta, hidden = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', meta, 'loaded', 'realm_disabled')
if m[1] ~= '1' then return {-1} end
return {m[2] == '1' and 1 or 0, redis.call('SISMEMBER', hidden, ARGV[1]), redis.call('HGET', pres, ARGV[1])}
`;

/** KEYS: meta, hidden. ARGV: gen seen before reading PostgreSQL, realm_disabled (1/0), fresh base, hidden ids... Returns 1, or 0 if gen moved. */
const LOAD = `
local meta, hidden = KEYS[1], KEYS[2]
if (redis.call('HGET', meta, 'gen') or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', hidden)
for k = 4, #ARGV do redis.call('SADD', hidden, ARGV[k]) end
redis.call('HSET', meta, 'loaded', '1', 'realm_disabled', ARGV[2], 'base', ARGV[3])
return 1
`;

/**
 * KEYS: meta, hidden. ARGV: what ('hide' | 'show' | 'realm'), value (user id, or 1/0), fresh base.
 * Changes the cached visibility if it is loaded; always bumps gen, so a load racing with the
 * change is refused and read again, and replaces the base, so readers' copies are read again.
 */
const SET_VISIBILITY = `
local meta, hidden = KEYS[1], KEYS[2]
redis.call('HINCRBY', meta, 'gen', 1)
redis.call('HSET', meta, 'base', ARGV[3])
if redis.call('HGET', meta, 'loaded') ~= '1' then return 0 end
if ARGV[1] == 'hide' then redis.call('SADD', hidden, ARGV[2])
elseif ARGV[1] == 'show' then redis.call('SREM', hidden, ARGV[2])
else redis.call('HSET', meta, 'realm_disabled', ARGV[2]) end
return 1
`;

/** KEYS: presence, meta, byupd. ARGV: user id, fresh base. */
const FORGET_USER = `
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[2], 'base', ARGV[2])
return redis.call('HDEL', KEYS[1], ARGV[1])
`;

type Scripts = Record<'zcPresenceRead' | 'zcPresenceReadOne' | 'zcPresenceLoad' | 'zcPresenceSetVisibility' | 'zcPresenceForget', (...args: Array<string | number>) => Promise<unknown>>;

/** A ping's details (`ping`'s arguments; `pingAndReadSince`). */
export interface PingRequest {
  userId: number;
  active: boolean;
  nowSeconds: number;
  rules: PingRules;
  /** See `ping`. */
  quietOnly: boolean;
  expect: { keys: readonly string[]; values: readonly string[] };
}

/** A reader's answer from `readSince`. */
export type ReadSince =
  | { kind: 'disabled' }
  | { kind: 'delta' | 'full'; base: string; seq: number; entries: PresenceEntry[]; /** The realm's people token (legacy.ts), read with the entries. */ peopleToken: string };

/**
 * A base no other process or call hands out: a random prefix per process and a counter. Every
 * read passes one (used only when the realm has none), and drawing 9 random bytes for each
 * was 5% of the gateway's CPU for a 1,000-person realm's presence.
 */
const BASE_PREFIX = randomBytes(9).toString('base64');
let basesMade = 0;
const freshBase = () => `${BASE_PREFIX}${(++basesMade).toString(36)}`;

function parseEntry(userId: number, v: string): PresenceEntry | undefined {
  const [a, i, u] = v.split(',').map(Number);
  if (!Number.isFinite(a) || !Number.isFinite(i) || !Number.isFinite(u)) return undefined;
  return { userId, activeTs: a as number, idleTs: i as number, updateId: u as number };
}

/** The realm's presence hash; every other presence key of the realm is this plus `:<suffix>` (one hash slot). */
export function presenceRealmKey(prefix: string, realmId: number): string {
  return redisKey(prefix, 'users', 'presence', `{${realmId}}`);
}

/** Redis key of the realm's people token (legacy.ts), beside its presence keys (same hash slot: READ_SINCE reads it). */
export function presencePeopleTokenKey(prefix: string, realmId: number): string {
  return `${presenceRealmKey(prefix, realmId)}:people`;
}

/** What a ping sends after its keys (PING's ARGV before the expected values). */
function pingArgs(p: PingRequest): Array<string | number> {
  const { rules, nowSeconds } = p;
  if (p.expect.keys.length !== p.expect.values.length) throw new Error('presence ping: one expected value per key');
  return [
    p.userId,
    nowSeconds,
    p.active ? 1 : 0,
    rules.updateMinFrequencySeconds,
    rules.offlineThresholdSeconds,
    rules.legacyActivityOffsetSeconds,
    nowSeconds * 1000,
    p.quietOnly ? 1 : 0,
  ];
}

function pingOutcome(userId: number, r: number[]): PingOutcome {
  if (r[0] === -3) return { kind: 'unexpected' };
  if (r[0] === -1) return { kind: 'unloaded' };
  if (r[0] === -2) return { kind: 'announce' };
  if (r[0] === 0) return { kind: 'hidden' };
  const [, changed, cameOnline, activeTs, idleTs, updateId, disabled] = r as [number, number, number, number, number, number, number];
  return { kind: 'recorded', entry: { userId, activeTs, idleTs, updateId }, changed: changed === 1, cameOnline: cameOnline === 1, realmDisabled: disabled === 1 };
}

function readSinceResult(r: unknown[]): ReadSince | undefined {
  if (r[0] === -1) return undefined;
  if (r[0] === 1) return { kind: 'disabled' };
  const [kind, newBase, newSeq, a, b, peopleToken] = r as [number, string, string, string[], Array<string | null>, string];
  const entries: PresenceEntry[] = [];
  if (kind === 2) {
    a.forEach((id, k) => {
      const e = b[k] == null ? undefined : parseEntry(Number(id), b[k] as string);
      if (e) entries.push(e);
    });
    return { kind: 'delta', base: newBase, seq: Number(newSeq), entries, peopleToken };
  }
  const hidden = new Set(a);
  for (let k = 0; k + 1 < b.length; k += 2) {
    const id = b[k] as string;
    if (hidden.has(id)) continue;
    const e = parseEntry(Number(id), b[k + 1] as string);
    if (e) entries.push(e);
  }
  return { kind: 'full', base: newBase, seq: Number(newSeq), entries, peopleToken };
}

export class PresenceStore {
  private readonly scripts: Scripts;
  private readonly pingScript = new LuaScript(PING, 4);
  private readonly readSinceScript = new LuaScript(READ_SINCE, 5);
  private readonly pingAndReadScript = new LuaScript(PING_AND_READ_SINCE, 5);
  /** Coalesced pings (`ping`'s `coalesced`): one round trip for those arriving within the window. */
  private readonly pingBatch: RedisBatch;
  /**
   * Other pings and reads made in one turn of the event loop: a fetch's ping and read of the
   * realm go out in one socket write (each write on the loopback cost as much as building a
   * 1,000-person answer), and in that order, so the read sees the ping.
   */
  private readonly turnBatch: RedisBatch;

  /**
   * `pingWindowMs`: how long a coalesced ping may wait for others to share its round trip.
   */
  constructor(
    redis: Redis,
    private readonly prefix: string,
    o: { pingWindowMs?: number } = {},
  ) {
    const defs: Array<[keyof Scripts, number, string]> = [
      ['zcPresenceRead', 3, READ],
      ['zcPresenceReadOne', 3, READ_ONE],
      ['zcPresenceLoad', 2, LOAD],
      ['zcPresenceSetVisibility', 2, SET_VISIBILITY],
      ['zcPresenceForget', 3, FORGET_USER],
    ];
    this.scripts = Object.fromEntries(
      defs.map(([name, numberOfKeys, lua]) => {
        const script = new LuaScript(lua, numberOfKeys);
        return [name, (...args: Array<string | number>) => script.run(redis, ...args)];
      }),
    ) as Scripts;
    this.redis = redis;
    this.pingBatch = new RedisBatch(redis, { windowMs: o.pingWindowMs ?? 0 });
    this.turnBatch = new RedisBatch(redis);
  }

  private readonly redis: Redis;

  private keys(realmId: number): [string, string, string] {
    const base = presenceRealmKey(this.prefix, realmId);
    return [base, `${base}:meta`, `${base}:hidden`];
  }

  private byUpdateKey(realmId: number): string {
    return `${this.keys(realmId)[0]}:byupd`;
  }

  /**
   * Records a ping at `nowSeconds` (see PING for the rules). With `quietOnly`, a ping that
   * comes online (and so must be announced to the realm) is not written but answered
   * `announce`, for whoever can announce it to record: the gateway stores the steady pings of
   * online users itself and leaves the rest to the users service.
   *
   * `expect` makes the ping conditional on other keys holding given values (the gateway's
   * credential tokens: the ping's round trip is also its authentication), answered
   * `unexpected` when one does not. Those keys are outside the realm's hash slot: one Redis
   * (or a primary with replicas) serves that; a Redis Cluster would not.
   *
   * `coalesced` sends the ping with the others made within the store's `pingWindowMs`, in one
   * pipeline: fewer round trips (socket writes and reads were most of a steady ping's cost)
   * for a few milliseconds more. A command sent directly meanwhile may overtake it, so a
   * caller reading right after its ping does not coalesce it.
   */
  async ping(
    realmId: number,
    userId: number,
    active: boolean,
    nowSeconds: number,
    rules: PingRules,
    quietOnly = false,
    expect: { keys: readonly string[]; values: readonly string[] } = { keys: [], values: [] },
    coalesced = false,
  ): Promise<PingOutcome> {
    const ping = pingArgs({ userId, active, nowSeconds, rules, quietOnly, expect });
    const keysAndArgs = [...this.keys(realmId), this.byUpdateKey(realmId), ...expect.keys, ...ping, ...expect.values];
    const r = (await this.pingScript.inBatch(coalesced ? this.pingBatch : this.turnBatch, this.redis, 4 + expect.keys.length, keysAndArgs)) as number[];
    return pingOutcome(userId, r);
  }

  /**
   * A ping (as `ping`, not coalesced) and then `readSince`, in one script sent at once: a
   * fetch's ping and read are one command and one reply. `read` is there when the ping was
   * recorded or the user is hidden (otherwise the caller does not use it); undefined in it
   * means the visibility must be loaded first.
   */
  async pingAndReadSince(realmId: number, ping: PingRequest, base: string, seq: number): Promise<{ ping: PingOutcome; read?: ReadSince | undefined }> {
    const { expect } = ping;
    const keysAndArgs = [
      ...this.keys(realmId),
      this.byUpdateKey(realmId),
      presencePeopleTokenKey(this.prefix, realmId),
      ...expect.keys,
      ...pingArgs(ping),
      base,
      seq,
      freshBase(),
      ...expect.values,
    ];
    const [p, read] = (await this.pingAndReadScript.runWithKeys(this.redis, 5 + expect.keys.length, keysAndArgs)) as [number[], unknown[] | undefined];
    const outcome = pingOutcome(ping.userId, p);
    return read === undefined ? { ping: outcome } : { ping: outcome, read: readSinceResult(read) };
  }

  /** The realm's visible presence, or undefined when the visibility must be loaded first. */
  async read(realmId: number): Promise<RealmPresence | undefined> {
    const r = (await this.scripts.zcPresenceRead(...this.keys(realmId))) as [number, number, string[], string[]] | [-1];
    if (r[0] === -1) return undefined;
    const [disabled, seq, hiddenIds, flat] = r as [number, number, string[], string[]];
    const hidden = new Set(hiddenIds);
    const entries: PresenceEntry[] = [];
    for (let k = 0; k + 1 < flat.length; k += 2) {
      const id = flat[k] as string;
      if (hidden.has(id)) continue;
      const e = parseEntry(Number(id), flat[k + 1] as string);
      if (e) entries.push(e);
    }
    return { realmDisabled: disabled === 1, lastUpdateId: seq, entries };
  }

  /**
   * What a reader holding the realm's presence under `base` and up to date with `seq` needs:
   * the entries updated since (`delta`), or the whole visible realm (`full`) when its base is
   * not the current one; `disabled` when the realm disables presence; undefined when the
   * visibility must be loaded first.
   */
  async readSince(realmId: number, base: string, seq: number): Promise<ReadSince | undefined> {
    const keysAndArgs = [...this.keys(realmId), this.byUpdateKey(realmId), presencePeopleTokenKey(this.prefix, realmId), base, seq, freshBase()];
    return readSinceResult((await this.readSinceScript.inBatch(this.turnBatch, this.redis, 5, keysAndArgs)) as unknown[]);
  }

  /**
   * One user's entry: null when they have none, hide it, or the realm disables presence;
   * undefined when the visibility must be loaded first.
   */
  async readOne(realmId: number, userId: number): Promise<PresenceEntry | null | undefined> {
    const r = (await this.scripts.zcPresenceReadOne(...this.keys(realmId), userId)) as [number, number, string | null] | [-1];
    if (r[0] === -1) return undefined;
    const [disabled, hidden, value] = r as [number, number, string | null];
    if (disabled === 1 || hidden === 1 || value === null) return null;
    return parseEntry(userId, value) ?? null;
  }

  /** The visibility generation, read before the PostgreSQL read that `loadVisibility` stores. */
  async visibilityGeneration(realmId: number): Promise<string> {
    return (await this.redis.hget(this.keys(realmId)[1], 'gen')) ?? '0';
  }

  /** Stores the visibility read from PostgreSQL; false when it changed since `gen` was read. */
  async loadVisibility(realmId: number, gen: string, realmDisabled: boolean, hiddenUserIds: readonly number[]): Promise<boolean> {
    const [, meta, hidden] = this.keys(realmId);
    return (await this.scripts.zcPresenceLoad(meta, hidden, gen, realmDisabled ? 1 : 0, freshBase(), ...hiddenUserIds)) === 1;
  }

  async setHidden(realmId: number, userId: number, hidden: boolean): Promise<void> {
    const [, meta, set] = this.keys(realmId);
    await this.scripts.zcPresenceSetVisibility(meta, set, hidden ? 'hide' : 'show', userId, freshBase());
  }

  async setRealmDisabled(realmId: number, disabled: boolean): Promise<void> {
    const [, meta, set] = this.keys(realmId);
    await this.scripts.zcPresenceSetVisibility(meta, set, 'realm', disabled ? 1 : 0, freshBase());
  }

  /** Drops a user's presence (deactivation: Zulip shows only active users' presence). */
  async forgetUser(realmId: number, userId: number): Promise<void> {
    const [pres, meta] = this.keys(realmId);
    await this.scripts.zcPresenceForget(pres, meta, this.byUpdateKey(realmId), userId, freshBase());
  }
}

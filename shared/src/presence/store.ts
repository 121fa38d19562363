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
import type { Redis } from '../redis/index.js';
import { redisKey } from '../redis/index.js';

/** One user's stored presence; timestamps in seconds, 0 when never seen. */
export interface PresenceEntry {
  userId: number;
  activeTs: number;
  idleTs: number;
  updateId: number;
}

export type PingOutcome =
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

const PARSE_ENTRY = `
local function parse(v)
  local p1 = string.find(v, ',', 1, true)
  local p2 = string.find(v, ',', p1 + 1, true)
  return tonumber(string.sub(v, 1, p1 - 1)), tonumber(string.sub(v, p1 + 1, p2 - 1))
end
`;

/**
 * KEYS: presence, meta, hidden. ARGV: user id, now (s), active (1/0), min frequency, offline
 * threshold, legacy activity offset, now (ms, the first seq), quiet only (1/0).
 * Returns {-1} unloaded, {0} hidden, {-2} when quiet only and the ping comes online (nothing
 * written), else {1, changed, came_online, active_ts, idle_ts, update_id, realm_disabled}.
 *
 * Zulip's rules (do_update_user_presence): the connection time moves when it is older than the
 * minimum frequency; an active ping also moves the activity time (and the connection time with
 * it). A user "comes online" on their first ping ever, or on an active ping after being
 * offline or idle (legacy status), and only then do other users get an event.
 */
const PING = `${PARSE_ENTRY}
local pres, meta, hidden = KEYS[1], KEYS[2], KEYS[3]
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
end
local disabled = redis.call('HGET', meta, 'realm_disabled') == '1'
return {1, changed and 1 or 0, cameOnline and 1 or 0, na, ni, u, disabled and 1 or 0}
`;

/** KEYS: presence, meta, hidden. Returns {-1} unloaded, else {realm_disabled, seq, hidden ids, flat hash}. */
const READ = `
local pres, meta, hidden = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', meta, 'loaded', 'realm_disabled', 'seq')
if m[1] ~= '1' then return {-1} end
return {m[2] == '1' and 1 or 0, tonumber(m[3] or '-1'), redis.call('SMEMBERS', hidden), redis.call('HGETALL', pres)}
`;

/** KEYS: presence, meta, hidden. ARGV: user id. Returns {-1} unloaded, else {realm_disabled, hidden, entry or false}. */
const READ_ONE = `
local pres, meta, hidden = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', meta, 'loaded', 'realm_disabled')
if m[1] ~= '1' then return {-1} end
return {m[2] == '1' and 1 or 0, redis.call('SISMEMBER', hidden, ARGV[1]), redis.call('HGET', pres, ARGV[1])}
`;

/** KEYS: meta, hidden. ARGV: gen seen before reading PostgreSQL, realm_disabled (1/0), hidden ids... Returns 1, or 0 if gen moved. */
const LOAD = `
local meta, hidden = KEYS[1], KEYS[2]
if (redis.call('HGET', meta, 'gen') or '0') ~= ARGV[1] then return 0 end
redis.call('DEL', hidden)
for k = 3, #ARGV do redis.call('SADD', hidden, ARGV[k]) end
redis.call('HSET', meta, 'loaded', '1', 'realm_disabled', ARGV[2])
return 1
`;

/**
 * KEYS: meta, hidden. ARGV: what ('hide' | 'show' | 'realm'), value (user id, or 1/0).
 * Changes the cached visibility if it is loaded; always bumps gen, so a load racing with the
 * change is refused and read again.
 */
const SET_VISIBILITY = `
local meta, hidden = KEYS[1], KEYS[2]
redis.call('HINCRBY', meta, 'gen', 1)
if redis.call('HGET', meta, 'loaded') ~= '1' then return 0 end
if ARGV[1] == 'hide' then redis.call('SADD', hidden, ARGV[2])
elseif ARGV[1] == 'show' then redis.call('SREM', hidden, ARGV[2])
else redis.call('HSET', meta, 'realm_disabled', ARGV[2]) end
return 1
`;

/** KEYS: presence. ARGV: user id. */
const FORGET_USER = `return redis.call('HDEL', KEYS[1], ARGV[1])`;

type Scripts = Record<'zcPresencePing' | 'zcPresenceRead' | 'zcPresenceReadOne' | 'zcPresenceLoad' | 'zcPresenceSetVisibility' | 'zcPresenceForget', (...args: Array<string | number>) => Promise<unknown>>;

function parseEntry(userId: number, v: string): PresenceEntry | undefined {
  const [a, i, u] = v.split(',').map(Number);
  if (!Number.isFinite(a) || !Number.isFinite(i) || !Number.isFinite(u)) return undefined;
  return { userId, activeTs: a as number, idleTs: i as number, updateId: u as number };
}

export class PresenceStore {
  private readonly scripts: Scripts;

  constructor(
    redis: Redis,
    private readonly prefix: string,
  ) {
    const defs: Array<[keyof Scripts, number, string]> = [
      ['zcPresencePing', 3, PING],
      ['zcPresenceRead', 3, READ],
      ['zcPresenceReadOne', 3, READ_ONE],
      ['zcPresenceLoad', 2, LOAD],
      ['zcPresenceSetVisibility', 2, SET_VISIBILITY],
      ['zcPresenceForget', 1, FORGET_USER],
    ];
    for (const [name, numberOfKeys, lua] of defs) if (!(name in redis)) redis.defineCommand(name, { numberOfKeys, lua });
    this.scripts = redis as unknown as Scripts;
    this.redis = redis;
  }

  private readonly redis: Redis;

  private keys(realmId: number): [string, string, string] {
    const base = redisKey(this.prefix, 'users', 'presence', `{${realmId}}`);
    return [base, `${base}:meta`, `${base}:hidden`];
  }

  /**
   * Records a ping at `nowSeconds` (see PING for the rules). With `quietOnly`, a ping that
   * comes online (and so must be announced to the realm) is not written but answered
   * `announce`, for whoever can announce it to record: the gateway stores the steady pings of
   * online users itself and leaves the rest to the users service.
   */
  async ping(realmId: number, userId: number, active: boolean, nowSeconds: number, rules: PingRules, quietOnly = false): Promise<PingOutcome> {
    const r = (await this.scripts.zcPresencePing(
      ...this.keys(realmId),
      userId,
      nowSeconds,
      active ? 1 : 0,
      rules.updateMinFrequencySeconds,
      rules.offlineThresholdSeconds,
      rules.legacyActivityOffsetSeconds,
      nowSeconds * 1000,
      quietOnly ? 1 : 0,
    )) as number[];
    if (r[0] === -1) return { kind: 'unloaded' };
    if (r[0] === -2) return { kind: 'announce' };
    if (r[0] === 0) return { kind: 'hidden' };
    const [, changed, cameOnline, activeTs, idleTs, updateId, disabled] = r as [number, number, number, number, number, number, number];
    return { kind: 'recorded', entry: { userId, activeTs, idleTs, updateId }, changed: changed === 1, cameOnline: cameOnline === 1, realmDisabled: disabled === 1 };
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
    return (await this.scripts.zcPresenceLoad(meta, hidden, gen, realmDisabled ? 1 : 0, ...hiddenUserIds)) === 1;
  }

  async setHidden(realmId: number, userId: number, hidden: boolean): Promise<void> {
    const [, meta, set] = this.keys(realmId);
    await this.scripts.zcPresenceSetVisibility(meta, set, hidden ? 'hide' : 'show', userId);
  }

  async setRealmDisabled(realmId: number, disabled: boolean): Promise<void> {
    const [, meta, set] = this.keys(realmId);
    await this.scripts.zcPresenceSetVisibility(meta, set, 'realm', disabled ? 1 : 0);
  }

  /** Drops a user's presence (deactivation: Zulip shows only active users' presence). */
  async forgetUser(realmId: number, userId: number): Promise<void> {
    await this.scripts.zcPresenceForget(this.keys(realmId)[0], userId);
  }
}

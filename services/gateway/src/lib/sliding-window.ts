/**
 * A rolling-window request counter in Redis (a sliding log: one sorted-set entry per counted
 * request, scored by Redis's own clock so replicas with skewed clocks agree). Unlike a fixed
 * window it never lets 2× the limit through around a window boundary. A refused request is
 * not counted, so a client that waits for Retry-After gets in. Memory: at most `limit`
 * entries per key, gone `windowMs` after the last one.
 *
 * One script call per check; callers may queue it in a pipeline beside other Redis work.
 */
import { randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';

// KEYS[1] the log; ARGV: window ms, limit, member, mode ('hit' counts the request, 'peek' only looks).
// Returns {allowed 0|1, count after, oldest entry ms or -1, newest entry ms or -1, now ms}.
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < limit then
  allowed = 1
  if ARGV[4] == 'hit' then
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    redis.call('PEXPIRE', KEYS[1], window)
    count = count + 1
  end
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
return {allowed, count, tonumber(oldest[2] or -1), tonumber(newest[2] or -1), now}
`;

export interface WindowState {
  allowed: boolean;
  limit: number;
  /** Requests counted in the window, this one included when it was counted. */
  count: number;
  /** Seconds until one more request would be allowed (0 when allowed now). */
  retryAfterSeconds: number;
  /** Epoch seconds when the window is empty again (Zulip's X-RateLimit-Reset). */
  resetEpochSeconds: number;
}

export type WindowMode = 'hit' | 'peek';

/** Queues one check of `key` on `commands` (a pipeline or multi); decode its result with `windowState`. */
export function queueWindowCheck(commands: ChainableCommander, key: string, limit: number, windowMs: number, mode: WindowMode = 'hit'): void {
  commands.eval(SCRIPT, 1, key, windowMs, limit, `${Date.now()}-${randomBytes(6).toString('base64')}`, mode);
}

/** The decoded answer of a queued check (`raw` is its pipeline result value). */
export function windowState(raw: unknown, limit: number, windowMs: number): WindowState {
  const [allowed, count, oldest, newest, now] = (raw as number[]).map(Number) as [number, number, number, number, number];
  const retryMs = allowed === 1 ? 0 : Math.max(1, oldest + windowMs - now);
  return {
    allowed: allowed === 1,
    limit,
    count,
    retryAfterSeconds: retryMs / 1000,
    resetEpochSeconds: Math.ceil(((newest >= 0 ? newest : now) + windowMs) / 1000),
  };
}

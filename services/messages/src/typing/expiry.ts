/**
 * Server-side expiry of typing notifications: a "start" that is neither renewed nor stopped
 * within TYPING_TIMING.startedExpiryMs gets its "stop" from the server, so a client that
 * vanished mid-sentence (network loss, closed laptop) never leaves others seeing it type.
 *
 * The pending stops live in Redis, shared by every replica: a sorted set of conversation keys
 * by due time and a hash of the stop event to send for each. Every replica sweeps once a
 * second; the sweep script takes due entries and removes them in one step, so each stop is
 * sent by exactly one replica. A renewed start pushes the due time back; an explicit stop
 * removes the entry (its own event is sent by the request).
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '@zc/shared/bus';
import { ClientNotify, eventsInbox } from '@zc/shared/contracts';
import type { Logger } from '@zc/shared/logging';
import { redisKey, type Redis } from '@zc/shared/redis';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const isClientNotify = TypeCompiler.Compile(ClientNotify);

/** KEYS: due zset, stops hash. ARGV: now (ms), max entries. Returns the stop payloads taken. */
const TAKE_DUE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local out = {}
for _, k in ipairs(due) do
  local v = redis.call('HGET', KEYS[2], k)
  redis.call('ZREM', KEYS[1], k)
  redis.call('HDEL', KEYS[2], k)
  if v then table.insert(out, v) end
end
return out
`;

const SWEEP_EVERY_MS = 1000;
const SWEEP_BATCH = 500;

type Scripts = { zcTypingTakeDue(due: string, stops: string, nowMs: number, max: number): Promise<string[]> };

export class TypingExpiry {
  private readonly due: string;
  private readonly stops: string;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly bus: Bus,
    private readonly log: Logger,
  ) {
    // One hash tag: the sweep script touches both keys (Redis Cluster).
    this.due = redisKey(prefix, 'messages', '{typing}', 'due');
    this.stops = redisKey(prefix, 'messages', '{typing}', 'stops');
    if (!('zcTypingTakeDue' in redis)) redis.defineCommand('zcTypingTakeDue', { numberOfKeys: 2, lua: TAKE_DUE });
  }

  /** A start was sent for `key`: unless renewed or stopped by `dueMs`, `stop` goes out then. */
  async started(key: string, stop: ClientNotify, dueMs: number): Promise<void> {
    await this.redis.multi().zadd(this.due, dueMs, key).hset(this.stops, key, JSON.stringify(stop)).exec();
  }

  /** The client stopped `key` itself. */
  async stopped(key: string): Promise<void> {
    await this.redis.multi().zrem(this.due, key).hdel(this.stops, key).exec();
  }

  /** Sends the stops due at `nowMs`; returns how many. */
  async sweep(nowMs = Date.now()): Promise<number> {
    const taken = await (this.redis as unknown as Scripts).zcTypingTakeDue(this.due, this.stops, nowMs, SWEEP_BATCH);
    for (const raw of taken) {
      let stop: unknown;
      try {
        stop = JSON.parse(raw);
      } catch {
        stop = undefined;
      }
      if (!isClientNotify.Check(stop)) {
        this.log.error('malformed pending typing stop dropped');
        continue;
      }
      await this.bus.publish(eventsInbox.notify, stop, { msgId: randomUUID() });
    }
    return taken.length;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.sweeping) return;
      this.sweeping = this.sweep()
        .then(() => undefined)
        .catch((err: unknown) => this.log.warn({ err }, 'typing expiry sweep failed'))
        .finally(() => {
          this.sweeping = undefined;
        });
    }, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
  }
}

/**
 * A Lua script run by its SHA1 (EVALSHA), loaded with EVAL the first time Redis does not know
 * it. Used instead of ioredis's `defineCommand`, which copies every defined script onto each
 * pipeline the connection creates: on the gateway's connection, whose credential checks make
 * a pipeline per request, seven presence scripts made each pipeline markedly dearer.
 */
import { createHash } from 'node:crypto';
import type { Redis, RedisBatch } from '../redis/index.js';

export class LuaScript {
  private readonly sha: string;

  constructor(
    private readonly lua: string,
    private readonly numberOfKeys: number,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  /** Runs the script with its keys first, then its arguments. */
  run(redis: Redis, ...keysAndArgs: Array<string | number>): Promise<unknown> {
    return this.runWithKeys(redis, this.numberOfKeys, keysAndArgs);
  }

  /**
   * Runs the script in `batch`'s next pipeline (one socket write for the commands queued in
   * the same turn). A script Redis does not know is run again on its own, after the batch: a
   * command queued behind it in the batch then runs first, which only a flushed script cache
   * brings about.
   */
  async inBatch(batch: RedisBatch, redis: Redis, numberOfKeys: number, keysAndArgs: Array<string | number>): Promise<unknown> {
    const [[err, value] = [null, null]] = await batch.run((p) => void p.evalsha(this.sha, numberOfKeys, ...keysAndArgs));
    if (!err) return value;
    if (!err.message.startsWith('NOSCRIPT')) throw err;
    return this.runWithKeys(redis, numberOfKeys, keysAndArgs);
  }

  /** Runs the script with more keys than its fixed ones (scripts that take optional keys). */
  async runWithKeys(redis: Redis, numberOfKeys: number, keysAndArgs: Array<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, numberOfKeys, ...keysAndArgs);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.eval(this.lua, numberOfKeys, ...keysAndArgs);
    }
  }
}

/**
 * One pipeline for many callers: commands queued by different requests during one turn of
 * the event loop go to Redis together, as one socket write, and come back as one read.
 *
 * Why: on a busy server the same small command arrives from many connections at once (every
 * long-poll of a stream wakes together when a message lands, and each re-polls and
 * re-authenticates). Sent one by one, each is a write and a read on the Redis socket, and the
 * loopback TCP work of those dominated the gateway's and the events service's CPU under
 * fan-out. Batched, that cost is paid once per turn.
 *
 * Order is kept: batches go out in the order they were queued, on one connection, so two
 * commands of one caller queued one after the other reach Redis in that order. A command sent
 * directly on the same connection in the meantime may overtake a queued one (it is not held
 * back); callers that need order between the two must queue both here.
 *
 * With `windowMs`, a batch stays open that long after its first command instead of one
 * turn: for frequent commands that arrive one at a time and may wait a little (presence
 * pings), so that each round trip carries several.
 */
import type { ChainableCommander, Redis } from 'ioredis';

/** What the caller's commands answered, in the order it queued them: `[error, value]` each. */
export type BatchResults = Array<[Error | null, unknown]>;

interface Waiter {
  from: number;
  to: number;
  resolve(r: BatchResults): void;
  reject(e: unknown): void;
}

export class RedisBatch {
  private pipeline?: ChainableCommander;
  private waiters: Waiter[] = [];

  private readonly windowMs: number;

  constructor(
    private readonly redis: Redis,
    o: { windowMs?: number } = {},
  ) {
    this.windowMs = o.windowMs ?? 0;
  }

  /**
   * Queues the commands `queue` adds to the shared pipeline (any command or defined script)
   * and resolves with their results once the batch has run.
   */
  run(queue: (p: ChainableCommander) => void): Promise<BatchResults> {
    if (!this.pipeline) {
      this.pipeline = this.redis.pipeline();
      if (this.windowMs > 0) setTimeout(() => this.flush(), this.windowMs);
      else setImmediate(() => this.flush());
    }
    const p = this.pipeline;
    const from = p.length;
    queue(p);
    const to = p.length;
    return new Promise((resolve, reject) => this.waiters.push({ from, to, resolve, reject }));
  }

  private flush(): void {
    const p = this.pipeline;
    const waiters = this.waiters;
    this.pipeline = undefined;
    this.waiters = [];
    if (!p) return;
    p.exec().then(
      (results) => {
        const all = (results ?? []) as BatchResults;
        for (const w of waiters) w.resolve(all.slice(w.from, w.to));
      },
      (e: unknown) => {
        for (const w of waiters) w.reject(e);
      },
    );
  }
}

/** The value of one result, throwing its error. */
export function resultValue(r: [Error | null, unknown] | undefined): unknown {
  if (!r) throw new Error('Redis batch: no reply for a queued command');
  if (r[0]) throw r[0];
  return r[1];
}

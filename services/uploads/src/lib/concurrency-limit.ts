/**
 * At most `limit` tasks at once, the others waiting in arrival order. Image work holds a whole
 * file and libvips buffers in memory, so a replica bounds how many run together. No I/O.
 */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `active` never dips in between.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

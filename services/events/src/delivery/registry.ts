/**
 * The registry's epoch: a random token created with the first queue of a Redis dataset and
 * recreated when the dataset is lost (FLUSHALL, a restart without persistence). Every queue
 * records the epoch it was created in; a queue from another epoch is treated as lost, and
 * the appender restarts from the new cursor when the epoch changes under it (the gateway's
 * poll path checks a queue's epoch itself, @zc/shared/event-queues' PollStore). A new registry
 * starts delivering at the inbox's end, since no queue of it can want an older event.
 */
import { randomUUID } from 'node:crypto';
import type { Bus } from '@zc/shared/bus';
import type { QueueStore } from '../store/queue-store.js';

export class Registry {
  constructor(
    private readonly store: QueueStore,
    private readonly bus: Bus,
  ) {}

  /** The inbox stream's name and the sequences it holds. */
  async inboxState(): Promise<{ stream: string; firstSeq: number; lastSeq: number }> {
    const stream = await this.bus.ensureStream('events', 'inbox');
    const { state } = await (await this.bus.jsm()).streams.info(stream);
    return { stream, firstSeq: state.first_seq, lastSeq: state.last_seq };
  }

  /** The current epoch and cursor, creating the registry if the dataset has none. */
  async ensure(): Promise<{ epoch: string; cursor: number }> {
    return (await this.store.readRegistry()) ?? (await this.store.ensureRegistry(randomUUID(), (await this.inboxState()).lastSeq));
  }

  /** Starts a new epoch at `cursor`: every existing queue becomes unknown to clients. */
  async reset(cursor: number): Promise<{ epoch: string; cursor: number }> {
    await this.store.deleteRegistry();
    return this.store.ensureRegistry(randomUUID(), cursor);
  }
}

/**
 * Tells every gateway which queues have new events (or were deleted), so the polls parked on
 * them re-read their queue at once (@zc/shared/event-queues' PollHub).
 */
import type { Bus } from '@zc/shared/bus';
import { eventsBroadcast } from '@zc/shared/contracts';

export class QueueWaker {
  constructor(private readonly bus: Bus) {}

  broadcastWake(queueIds: readonly string[]): void {
    if (queueIds.length > 0) this.bus.broadcast(eventsBroadcast, { wake: [...queueIds] });
  }
}

/**
 * Tells every gateway which queues have new events (or were deleted), so the polls parked on
 * them re-read their queue at once (@zc/shared/event-queues' PollHub).
 */
import type { Bus } from '@zc/shared/bus';
import { eventsBroadcast, type WakeAppended } from '@zc/shared/contracts';

export class QueueWaker {
  constructor(private readonly bus: Bus) {}

  /** `appended`: what some of the queues just got, for the gateways to answer their parked polls with. */
  broadcastWake(queueIds: readonly string[], appended?: WakeAppended, sentAt?: number): void {
    if (queueIds.length > 0) this.bus.broadcast(eventsBroadcast, { wake: [...queueIds], ...(appended ? { appended } : {}), ...(sentAt !== undefined ? { sent_at: sentAt } : {}) });
  }
}

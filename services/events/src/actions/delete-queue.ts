/** DELETE /events (spec 4.21): ends any poll parked on the queue, then the queue is gone. */
import type { Actor } from '@zc/shared/contracts';
import { badEventQueueId } from '@zc/shared/event-queues';
import type { EventsDeps } from '../deps.js';
import type { QueueWaker } from '../delivery/wake.js';

export async function doDeleteQueue(deps: EventsDeps, waker: QueueWaker, actor: Actor, queueId: string): Promise<void> {
  if (!(await deps.store.delete(queueId, actor.user_id))) throw badEventQueueId(queueId);
  // The parked poll, on whichever gateway, re-reads its queue and answers BAD_EVENT_QUEUE_ID.
  waker.broadcastWake([queueId]);
}

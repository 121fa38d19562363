/** DELETE /events (spec 4.21): ends any poll parked on the queue, then the queue is gone. */
import type { Actor } from '@zc/shared/contracts';
import type { EventsDeps } from '../deps.js';
import { badEventQueueId, type PollHub } from '../delivery/poll-hub.js';

export async function doDeleteQueue(deps: EventsDeps, hub: PollHub, actor: Actor, queueId: string): Promise<void> {
  if (!(await deps.store.delete(queueId, actor.user_id))) throw badEventQueueId(queueId);
  // The parked poll, wherever it is, re-reads its queue and answers BAD_EVENT_QUEUE_ID.
  hub.broadcastWake([queueId]);
}

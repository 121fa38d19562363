/**
 * Queues whose owner lost the right to what they were registered for (events.v1.drop_user_queues):
 * deleted, and their parked polls, on whichever gateway, re-read and answer BAD_EVENT_QUEUE_ID.
 * The poll path refuses a guest's all_public_streams queue by itself (POLL's guest flag); this
 * also ends polls parked before the change, which would otherwise keep receiving until their
 * heartbeat.
 */
import type { EventsDeps } from '../deps.js';
import type { QueueWaker } from '../delivery/wake.js';

export async function doDropUserQueues(
  deps: EventsDeps,
  waker: QueueWaker,
  r: { realm_id: number; user_id: number; scope: 'all' | 'all_public_streams' },
): Promise<number> {
  const ids = await deps.store.liveQueuesOf(r.user_id);
  const settings = await deps.store.settingsOf(ids);
  const doomed = ids.filter((id) => {
    const s = settings.get(id);
    return s && s.realmId === r.realm_id && (r.scope === 'all' || s.allPublicStreams);
  });
  let dropped = 0;
  for (const id of doomed) if (await deps.store.delete(id, r.user_id)) dropped++;
  waker.broadcastWake(doomed);
  return dropped;
}

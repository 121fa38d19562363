/** `attachment` client events go to the owner's queues only (Zulip's notify_attachment_update). */
import { eventsInbox } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';

export function notifyOwner(q: Queryable, realmId: number, ownerId: number, event: Record<string, unknown>): Promise<void> {
  return addToOutbox(q, 'uploads', eventsInbox.notify, { realm_id: realmId, users: [ownerId], event: { type: 'attachment', ...event } });
}

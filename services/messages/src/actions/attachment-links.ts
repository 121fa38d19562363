/**
 * The uploads a message links, pushed to the uploads service before a send, edit or deletion
 * that changes them is answered (docs/CONVENTIONS.md, read models): a subscriber who opens
 * the file right after the sender hears back may download it, and one whose access an edit
 * or deletion took away no longer may. The attachments_changed event in the same
 * transaction carries the same change, so if the push fails the link follows a moment later.
 */
import { uploads, type MessageAttachmentsChanged } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';

/** Long enough for a loaded uploads service, short enough that a missing one barely delays a send. */
const PUSH_TIMEOUT_MS = 3000;

export async function pushAttachmentLinks(deps: MessagesDeps, changes: readonly MessageAttachmentsChanged[]): Promise<void> {
  await Promise.all(
    changes.map(async (change) => {
      try {
        await deps.bus.request(uploads.syncMessageAttachments, change, { timeoutMs: PUSH_TIMEOUT_MS });
      } catch (err) {
        // The change is committed and its event is on the way: the answer stands.
        deps.log.warn({ err, message_id: change.message_id }, 'uploads service did not take the attachment links synchronously; they follow by event');
      }
    }),
  );
}

/** Attachments as clients see them (GET /attachments, `attachment` events). Pure. */
import type { Attachment } from '@zc/shared/contracts';
import type { AttachmentRow, LinkedMessage } from '../store/attachment-store.js';

/** Zulip's Attachment.to_dict: times in milliseconds, messages oldest first. */
export function toApiAttachment(row: AttachmentRow, links: readonly LinkedMessage[]): Attachment {
  return {
    id: row.id,
    name: row.file_name,
    path_id: row.path_id,
    size: row.size,
    create_time: row.create_time.getTime(),
    messages: links
      .filter((l) => l.attachment_id === row.id)
      .sort((a, b) => a.message_id - b.message_id)
      .map((l) => ({ id: l.message_id, date_sent: l.date_sent.getTime() })),
  };
}

/**
 * DELETE /messages/{message_id}: Zulip's delete_message_backend and do_delete_messages. The
 * caller must be able to read the message and pass validate_can_delete_message
 * (@zc/shared/policy `deleteMessageRefusal`). The message leaves every read path with its
 * per-user rows (so unread counts and flags follow) and reactions; a `delete_message` event
 * goes to everyone who could read it (queries/message-audience.ts), which the events service
 * splits into one event per message for queues without `bulk_message_deletion`.
 */
import { eventsInbox, isAdmin, MESSAGE_DELETED_VERSION, messagesEvents, type Actor, type MessageAttachmentsChanged } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest, organizationAdministratorRequired } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { deleteMessageRefusal, realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { accessMessage, viewerOf } from '../queries/get-messages.js';
import { messageAudience, messagesAudience, type MessageAudience } from '../queries/message-audience.js';
import { deleteStore, type TopicMessageRow } from '../store/delete-store.js';
import { editStore } from '../store/edit-store.js';
import type { MessageRow } from '../store/message-store.js';
import { pushAttachmentLinks } from './attachment-links.js';
import { accessStreamById } from './read-model.js';

const noPermission = () => badRequest("You don't have permission to delete this message");

export async function checkDeleteMessage(deps: MessagesDeps, actor: Actor, messageId: number): Promise<void> {
  const realm = await deps.directory.realmFor(actor);
  const { row } = await accessMessage(deps.pool, viewerOf(actor), messageId);
  const { found } = await deps.directory.resolveUsers(deps.pool, realm.id, [actor.user_id, row.sender_id]);
  const me = found.find((u) => u.id === actor.user_id);
  const sender = found.find((u) => u.id === row.sender_id);
  if (!me) throw badRequest('Invalid user');
  const message = { sender_id: row.sender_id, sender_bot_owner_id: sender?.bot_owner_id ?? null, date_sent: row.date_sent };
  // The role the request carries (the gateway re-reads it after every change), not the copy's.
  const deleter = { id: me.id, role: actor.role, date_joined: me.date_joined };
  // realmFor: the copy is as new as the request's realm revision, so a right just given or
  // taken away by PATCH /realm holds from the next request on.
  const refusal = deleteMessageRefusal(deleter, message, realmSettings(realm.settings));
  if (refusal === 'not_allowed') throw noPermission();
  if (refusal === 'time_limit') throw badRequest('The time limit for deleting this message has passed');
  // Read before the rows go: who could read it is who hears of the deletion.
  const audience = await messageAudience(deps.pool, realm.id, row);

  const unlinked = await transaction(deps.pool, async (tx) => {
    await editStore.lockMessages(tx, [row.id]);
    const conversation = row.stream_id === null ? null : { stream_id: row.stream_id, recipient_id: row.recipient_id, topic: row.topic };
    const { deleted, unlinked } = await deleteAndAnnounce(tx, realm.id, [row], conversation, audience);
    if (deleted.length === 0) throw badRequest('Message already deleted');
    return unlinked;
  });
  await pushAttachmentLinks(deps, unlinked);
}

type DeletedRow = Pick<MessageRow, 'id' | 'sender_id' | 'date_sent' | 'has_attachment'>;

/**
 * Deletes messages of one conversation (locked by the caller) inside `tx` and announces it:
 * one `delete_message` event to `audience`, and each attachment-bearing message to the
 * uploads service, which unlinks its attachments (and removes those it was the last user of).
 * Returns the ids that were still there.
 */
async function deleteAndAnnounce(
  tx: Queryable,
  realmId: number,
  rows: readonly DeletedRow[],
  conversation: { stream_id: number; recipient_id: number; topic: string } | null,
  audience: MessageAudience,
): Promise<{ deleted: number[]; unlinked: MessageAttachmentsChanged[] }> {
  const deleted = await deleteStore.deleteMessages(tx, rows.map((r) => r.id));
  const unlinked: MessageAttachmentsChanged[] = [];
  if (deleted.length === 0) return { deleted, unlinked };
  if (conversation !== null) {
    // Zulip's check_update_first_message_id: the stream's first message gone, the subscriptions
    // service (which keeps first_message_id) hears which one is first now.
    const firstLeft = await editStore.firstMessageId(tx, conversation.recipient_id);
    if (firstLeft === null || Math.min(...deleted) < firstLeft) {
      await addToOutbox(tx, 'messages', messagesEvents.streamMessagesDeleted, { realm_id: realmId, stream_id: conversation.stream_id, message_ids: deleted, first_message_id: firstLeft });
    }
  }
  const event =
    conversation === null
      ? { type: 'delete_message', message_type: 'private', message_ids: deleted }
      : { type: 'delete_message', message_type: 'stream', message_ids: deleted, stream_id: conversation.stream_id, topic: conversation.topic };
  await addToOutbox(tx, 'messages', eventsInbox.notify, {
    realm_id: realmId,
    users: audience.userIds,
    event,
    ...(audience.publicStream ? { public_stream: true } : {}),
  });
  const gone = new Set(deleted);
  for (const r of rows) {
    if (!r.has_attachment || !gone.has(r.id)) continue;
    const change = {
      realm_id: realmId,
      message_id: r.id,
      sender_id: r.sender_id,
      date_sent: Math.floor(r.date_sent.getTime() / 1000),
      path_ids: [],
      version: MESSAGE_DELETED_VERSION,
    };
    await addToOutbox(tx, 'messages', messagesEvents.messageAttachmentsChanged, change);
    unlinked.push(change);
  }
  return { deleted, unlinked };
}

/**
 * POST /streams/{stream_id}/delete_topic: Zulip's delete_in_topic. Administrators only; the
 * stream must be one they may access; on a stream with protected history only the messages
 * they received. Deleted newest first in batches, each its own transaction with its own
 * events, so a topic too large for one request still shrinks with every request; false when
 * the time limit ran out with messages left (the client repeats the request).
 */
export async function doDeleteTopic(deps: MessagesDeps, actor: Actor, streamId: number, topic: string): Promise<boolean> {
  if (!isAdmin(actor)) throw organizationAdministratorRequired();
  const realm = await deps.directory.realmFor(actor);
  const stream = await accessStreamById(deps, actor, streamId);
  const onlyUserId = stream.history_public_to_subscribers ? undefined : actor.user_id;
  const { deleteTopicBatchSize: batch, deleteTopicTimeLimitMs: limitMs } = deps.settings;
  const started = Date.now();
  for (;;) {
    const { deleted, unlinked } = await transaction(deps.pool, async (tx) => {
      const rows = await deleteStore.lockNewestInTopic(tx, stream.recipient_id, topic, batch, onlyUserId);
      // The event names the topic as the messages spell it; a topic matched case-insensitively may have several spellings.
      const bySpelling = new Map<string, TopicMessageRow[]>();
      for (const r of rows) bySpelling.set(r.topic, [...(bySpelling.get(r.topic) ?? []), r]);
      const unlinked: MessageAttachmentsChanged[] = [];
      for (const [spelling, group] of bySpelling) {
        const audience = await messagesAudience(tx, realm.id, stream.id, group.map((r) => r.id));
        const conversation = { stream_id: stream.id, recipient_id: stream.recipient_id, topic: spelling };
        unlinked.push(...(await deleteAndAnnounce(tx, realm.id, group, conversation, audience)).unlinked);
      }
      return { deleted: rows.length, unlinked };
    });
    await pushAttachmentLinks(deps, unlinked);
    if (deleted < batch) return true;
    if (Date.now() - started >= limitMs) return false;
  }
}

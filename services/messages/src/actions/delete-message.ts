/**
 * DELETE /messages/{message_id}: Zulip's delete_message_backend and do_delete_messages. The
 * caller must be able to read the message and pass validate_can_delete_message
 * (@zc/shared/policy `deleteMessageRefusal`). The message leaves every read path with its
 * per-user rows (so unread counts and flags follow) and reactions; a `delete_message` event
 * goes to everyone who could read it (queries/message-audience.ts), which the events service
 * splits into one event per message for queues without `bulk_message_deletion`.
 */
import { eventsInbox, messagesEvents, type Actor } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { deleteMessageRefusal, realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import { accessMessage, viewerOf } from '../queries/get-messages.js';
import { messageAudience } from '../queries/message-audience.js';
import { deleteStore } from '../store/delete-store.js';
import { editStore } from '../store/edit-store.js';

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

  await transaction(deps.pool, async (tx) => {
    await editStore.lockMessages(tx, [row.id]);
    const deleted = await deleteStore.deleteMessages(tx, [row.id]);
    if (deleted.length === 0) throw badRequest('Message already deleted');
    const event =
      row.stream_id === null
        ? { type: 'delete_message', message_type: 'private', message_ids: deleted }
        : { type: 'delete_message', message_type: 'stream', message_ids: deleted, stream_id: row.stream_id, topic: row.topic };
    await addToOutbox(tx, 'messages', eventsInbox.notify, {
      realm_id: realm.id,
      users: audience.userIds,
      event,
      ...(audience.publicStream ? { public_stream: true } : {}),
    });
    // The uploads service unlinks the message's attachments (and removes those it was the last user of).
    if (row.has_attachment) {
      await addToOutbox(tx, 'messages', messagesEvents.messageAttachmentsChanged, {
        realm_id: realm.id,
        message_id: row.id,
        sender_id: row.sender_id,
        date_sent: Math.floor(row.date_sent.getTime() / 1000),
        path_ids: [],
      });
    }
  });
}

/**
 * PATCH /messages/{message_id} (spec 4.14): content edits, topic edits and moves between
 * streams, as Zulip's check_update_message and do_update_message do them.
 *
 * Checks and rendering happen before the transaction; inside it the affected messages are
 * locked (so two edits of one message serialise and neither loses the other's history entry),
 * re-read, rewritten with their new edit history, the recipients' content flags recomputed,
 * per-user rows moved with the messages' visibility, and the client events written to the
 * outbox. Notification-bot posts about a move go out after the commit.
 */
import { eventsInbox, isGuest, messagesEvents, type Actor, type EditHistoryEntry, type MessageAttachmentsChanged, type UpdateMessageEvent } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { realmSettings } from '@zc/shared/policy';
import type { MessagesDeps } from '../deps.js';
import {
  checkEditPayload,
  checkEditPermission,
  contentAfterEdit,
  editHistoryEntry,
  parsePropagateMode,
  type EditChange,
} from '../lib/edit-rules.js';
import { FLAG_BITS, flagNames } from '../lib/flags.js';
import { normaliseContent } from '../lib/message-input.js';
import { CONTENT_FLAG_MASK } from '../lib/mention-flags.js';
import { RENDERER_VERSION, topicLinksOf } from '../lib/render.js';
import { accessMessage, viewerOf } from '../queries/get-messages.js';
import { readersOf } from '../queries/message-audience.js';
import { editStore } from '../store/edit-store.js';
import { messageStore, type MessageRow } from '../store/message-store.js';
import { readModelStore, type RealmRow, type StreamRow, type UserRow } from '../store/read-model-store.js';
import { pushAttachmentLinks } from './attachment-links.js';
import { sendMoveNotifications } from './move-notifications.js';
import { streamAccessFor } from './read-model.js';
import { renderMessage, type RenderedMessage } from './render-message.js';
import { checkPostPolicy } from './send-message.js';
import type { SendWriter } from './send-writer.js';

export interface UpdateMessageRequest {
  actor: Actor;
  message_id: number;
  content?: string;
  topic?: string;
  stream_id?: number;
  propagate_mode: string;
  send_notification_to_old_thread: boolean;
  send_notification_to_new_thread: boolean;
}

const invalidChannelId = () => badRequest('Invalid channel ID');

/** The stream a move goes to: one the editor may read and post to. */
async function checkDestination(deps: MessagesDeps, realm: RealmRow, editor: UserRow, streamId: number, now: Date): Promise<StreamRow> {
  const { stream, subscribed } = await streamAccessFor(deps, realm.id, editor.id, { stream_id: streamId });
  if (!stream || stream.is_archived) throw invalidChannelId();
  if ((stream.invite_only || isGuest(editor)) && !subscribed) throw invalidChannelId();
  checkPostPolicy(stream, editor, realm, now);
  return stream;
}

/** Which messages a topic or stream change moves (Zulip's propagate_mode). */
async function messagesToMove(deps: MessagesDeps, actor: Actor, target: MessageRow, change: EditChange, oldStream: StreamRow | undefined): Promise<number[]> {
  if (change.propagate_mode === 'change_one') return [target.id];
  // With protected history an editor moves only what they can see: the messages they received.
  const onlyVisibleTo = oldStream && !oldStream.history_public_to_subscribers ? actor.user_id : undefined;
  const from = change.propagate_mode === 'change_later' ? target.id : 0;
  const ids = await editStore.topicMessageIds(deps.pool, target.recipient_id, target.topic, from, onlyVisibleTo);
  return [...new Set([target.id, ...ids])].sort((a, b) => a - b);
}

interface AccessChange {
  /** Users with rows for moved messages who cannot read the destination: their rows go. */
  losing: number[];
  /** Destination subscribers who get rows (read) because its history is protected. */
  gaining: number[];
  destinationSubscribers: number[];
}

async function accessChangeOfMove(deps: MessagesDeps, realmId: number, movedIds: readonly number[], to: StreamRow): Promise<AccessChange> {
  const [holders, subscribers] = await Promise.all([editStore.usersWithRows(deps.pool, movedIds), readModelStore.subscriberIds(deps.pool, to.id)]);
  const subscribed = new Set(subscribers);
  const holderRows = await deps.directory.store.usersByIds(deps.pool, realmId, holders);
  const canRead = (u: UserRow) => subscribed.has(u.id) || (!to.invite_only && !isGuest(u));
  return {
    losing: holderRows.filter((u) => !canRead(u)).map((u) => u.id),
    gaining: to.history_public_to_subscribers ? [] : subscribers,
    destinationSubscribers: subscribers,
  };
}

/** Checks and applies an edit; see the file comment. */
export async function checkUpdateMessage(deps: MessagesDeps, writer: SendWriter, r: UpdateMessageRequest): Promise<void> {
  const { actor } = r;
  const propagateMode = parsePropagateMode(r.propagate_mode);
  const realm = await deps.directory.realmFor(actor);
  const { row: target } = await accessMessage(deps.pool, viewerOf(actor), r.message_id);
  const change = checkEditPayload(target, {
    propagate_mode: propagateMode,
    ...(r.content !== undefined ? { content: r.content } : {}),
    ...(r.topic !== undefined ? { topic: r.topic } : {}),
    ...(r.stream_id !== undefined ? { stream_id: r.stream_id } : {}),
  });
  const editor = (await deps.directory.resolveUsers(deps.pool, realm.id, [actor.user_id])).found[0];
  if (!editor) throw badRequest('Invalid user');
  const now = new Date();
  checkEditPermission({ user_id: editor.id, role: editor.role, date_joined: editor.date_joined }, target, change, realmSettings(realm.settings), now);

  const oldStream = target.stream_id === null ? undefined : await readModelStore.streamById(deps.pool, realm.id, target.stream_id);
  const newStream = change.stream_id === undefined ? undefined : await checkDestination(deps, realm, editor, change.stream_id, now);

  let content: { text: string; r: RenderedMessage } | undefined;
  if (change.content !== undefined) {
    const text = normaliseContent(contentAfterEdit(change.content));
    const recipientIds = (await editStore.rowsOf(deps.pool, target.id)).map((x) => x.user_id);
    content = {
      text,
      r: await renderMessage(deps, realm, { content: text, senderId: target.sender_id, streamId: target.stream_id, recipientId: target.recipient_id, topic: target.topic, recipientIds }),
    };
  }
  const moving = change.topic !== undefined || newStream !== undefined;
  const movedIds = moving ? await messagesToMove(deps, actor, target, change, oldStream) : [];
  const access = newStream ? await accessChangeOfMove(deps, realm.id, movedIds, newStream) : undefined;
  const oldSubscribers = oldStream?.history_public_to_subscribers ? await readModelStore.subscriberIds(deps.pool, oldStream.id) : [];
  const timestamp = Math.floor(now.getTime() / 1000);
  const newTopic = change.topic;
  const topicLinks = newTopic !== undefined ? topicLinksOf(newTopic, (await deps.render.forRealm(realm.id)).linkifiers) : undefined;

  let linksChange: MessageAttachmentsChanged | undefined;
  await transaction(deps.pool, async (tx) => {
    const affected = [...new Set([target.id, ...movedIds])];
    await editStore.lockMessages(tx, affected);
    const current = new Map((await messageStore.byIds(tx, affected)).map((m) => [m.id, m]));
    const before = current.get(target.id);
    if (!before) throw badRequest('Invalid message(s)');

    // One history entry per message: the target's may hold content and topic/stream together.
    const historyOf = (m: MessageRow): EditHistoryEntry[] => [
      editHistoryEntry({
        userId: actor.user_id,
        timestamp,
        ...(content && m.id === target.id
          ? { content: { prev_content: m.content, prev_rendered_content: m.rendered_content, prev_rendered_content_version: m.rendered_content_version } }
          : {}),
        ...(newTopic !== undefined ? { topic: { prev: m.topic, next: newTopic } } : {}),
        ...(newStream && m.stream_id !== null ? { stream: { prev: m.stream_id, next: newStream.id } } : {}),
      }),
      ...(m.edit_history ?? []),
    ];

    const event: UpdateMessageEvent = {
      type: 'update_message',
      user_id: actor.user_id,
      rendering_only: false,
      message_id: target.id,
      message_ids: moving ? movedIds : [target.id],
      edit_timestamp: timestamp,
    };
    if (oldStream) {
      event.stream_name = oldStream.name;
      event.stream_id = oldStream.id;
    }

    if (content) {
      const rendered = content.r.rendered;
      await editStore.rewriteContent(
        tx,
        target.id,
        {
          content: content.text,
          rendered_content: rendered.html,
          rendered_content_version: RENDERER_VERSION,
          is_me_message: rendered.is_me_message,
          has_link: rendered.has_link,
          has_image: rendered.has_image,
          has_attachment: rendered.has_attachment,
        },
        historyOf(before),
        now,
      );
      if (rendered.attachment_path_ids.length || before.has_attachment) {
        linksChange = {
          realm_id: realm.id,
          message_id: target.id,
          sender_id: before.sender_id,
          date_sent: Math.floor(before.date_sent.getTime() / 1000),
          path_ids: rendered.attachment_path_ids,
          // The history grows by one entry with every edit of the (locked) message: a version.
          version: historyOf(before).length,
        };
        await addToOutbox(tx, 'messages', messagesEvents.messageAttachmentsChanged, linksChange);
      }
      // Mentions, wildcards and alert words follow the new content (spec 2.9).
      const rows = await editStore.rowsOf(tx, target.id);
      await editStore.setFlags(
        tx,
        target.id,
        rows.map((x) => x.user_id),
        rows.map((x) => (x.flags & ~CONTENT_FLAG_MASK) | content.r.contentFlags(x.user_id)),
      );
      Object.assign(event, {
        orig_content: before.content,
        orig_rendered_content: before.rendered_content,
        content: content.text,
        rendered_content: rendered.html,
        prev_rendered_content_version: before.rendered_content_version,
        is_me_message: rendered.is_me_message,
      });
    }

    if (moving) {
      const moved = movedIds.map((id) => current.get(id)).filter((m): m is MessageRow => m !== undefined);
      await editStore.move(
        tx,
        moved.map((m) => m.id),
        { recipient_id: newStream?.recipient_id ?? before.recipient_id, stream_id: newStream?.id ?? (before.stream_id as number), topic: newTopic ?? null },
        moved.map(historyOf),
        now,
      );
      if (newStream && oldStream && newStream.id !== oldStream.id && moved.length > 0) {
        // Both streams' first_message_id (kept by the subscriptions service) may change.
        await addToOutbox(tx, 'messages', messagesEvents.messagesMoved, {
          realm_id: realm.id,
          from_stream_id: oldStream.id,
          to_stream_id: newStream.id,
          moved_first_message_id: moved.reduce((low, m) => Math.min(low, m.id), Number.MAX_SAFE_INTEGER),
          from_first_message_id: await editStore.firstMessageId(tx, oldStream.recipient_id),
        });
      }
      if (access) {
        await editStore.deleteRows(tx, access.losing, movedIds);
        const pairs = access.gaining.flatMap((u) => movedIds.map((m) => [u, m] as const));
        await messageStore.insertUserMessages(tx, pairs.map((p) => p[0]), pairs.map((p) => p[1]), pairs.map(() => FLAG_BITS.read));
      }
      event.orig_subject = before.topic;
      event.propagate_mode = propagateMode;
      if (newTopic !== undefined) {
        event.subject = newTopic;
        event.topic_links = topicLinks ?? [];
      }
      if (newStream) event.new_stream_id = newStream.id;
    }

    // Everyone with a row gets their flags after the edit; with public history, the other
    // subscribers (who read it as history) get it as read (Zulip's subscriber_info).
    // A leftover row (someone removed from a private stream, a guest who left) gets no event:
    // the edit reaches only those who may read the message now (CVE-2024-27286, event path).
    const finalStream = newStream ?? oldStream;
    const allRows = await editStore.rowsOf(tx, target.id);
    const readers = finalStream ? await readersOf(tx, realm.id, finalStream, allRows.map((x) => x.user_id)) : undefined;
    const rows = readers ? allRows.filter((x) => readers.has(x.user_id)) : allRows;
    const users: Array<{ id: number; flags: string[] }> = rows.map((x) => ({ id: x.user_id, flags: flagNames(x.flags) }));
    const losing = new Set(access?.losing ?? []);
    if (oldStream?.history_public_to_subscribers) {
      const withRows = new Set(rows.map((x) => x.user_id));
      const others = new Set([...oldSubscribers, ...(access?.destinationSubscribers ?? [])].filter((id) => !withRows.has(id) && !losing.has(id)));
      for (const id of [...others].sort((a, b) => a - b)) users.push({ id, flags: ['read'] });
    }
    // An edit in a public stream also reaches all_public_streams queues, as its message did.
    const publicStream = oldStream !== undefined && oldStream !== null && !oldStream.invite_only && !(newStream?.invite_only ?? false);
    await addToOutbox(tx, 'messages', eventsInbox.notify, { realm_id: realm.id, users, event, ...(publicStream ? { public_stream: true } : {}) });
    if (losing.size > 0 && oldStream) {
      await addToOutbox(tx, 'messages', eventsInbox.notify, {
        realm_id: realm.id,
        users: [...losing],
        event: { type: 'delete_message', message_type: 'stream', message_ids: movedIds, stream_id: oldStream.id, topic: before.topic },
      });
    }
  });
  if (linksChange) await pushAttachmentLinks(deps, [linksChange]);

  if (moving && oldStream) {
    await sendMoveNotifications(deps, writer, {
      realm,
      editor,
      from: { stream: oldStream, topic: target.topic },
      to: { stream: newStream ?? oldStream, topic: newTopic ?? target.topic },
      movedCount: movedIds.length,
      movedAll: change.propagate_mode === 'change_all',
      notifyOld: r.send_notification_to_old_thread,
      notifyNew: r.send_notification_to_new_thread,
    });
  }
}

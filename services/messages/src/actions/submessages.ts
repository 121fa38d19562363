/**
 * POST /submessage, as Zulip's process_submessage and do_add_submessage: a reader of a widget
 * message (lib/widget.ts) adds a vote, an option or a task. The first submessage of a message
 * must be its sender's (verify_submessage_sender), data for a poll or todo widget must have
 * that widget's shape, and the `submessage` event goes to everyone who may read the message.
 */
import { eventsInbox, type Actor } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { MessagesDeps } from '../deps.js';
import { checkWidgetData, widgetOf, originalContent } from '../lib/widget.js';
import { accessMessage, viewerOf } from '../queries/get-messages.js';
import { messageAudience } from '../queries/message-audience.js';
import { submessageStore } from '../store/submessage-store.js';

export interface SubmessageRequest {
  actor: Actor;
  message_id: number;
  msg_type: string;
  content: string;
}

export async function checkAddSubmessage(deps: MessagesDeps, r: SubmessageRequest): Promise<void> {
  const { actor } = r;
  await deps.directory.realmFor(actor);
  const { row } = await accessMessage(deps.pool, viewerOf(actor), r.message_id);
  const widget = widgetOf(originalContent(row));
  const isSender = row.sender_id === actor.user_id;
  // A widget message already has its sender's submessage (the widget itself).
  if (!isSender && !widget && !(await submessageStore.hasFrom(deps.pool, row.id, row.sender_id))) {
    throw badRequest('You cannot attach a submessage to this message.');
  }
  let data: unknown;
  try {
    data = JSON.parse(r.content);
  } catch {
    throw badRequest('Invalid json for submessage');
  }
  checkWidgetData(widget?.widget_type, data, isSender);
  const audience = await messageAudience(deps.pool, actor.realm_id, row);
  await transaction(deps.pool, async (tx) => {
    const stored = await submessageStore.insert(tx, { message_id: row.id, sender_id: actor.user_id, msg_type: r.msg_type, content: r.content });
    await addToOutbox(tx, 'messages', eventsInbox.notify, {
      realm_id: actor.realm_id,
      users: audience.userIds,
      event: { type: 'submessage', msg_type: stored.msg_type, message_id: stored.message_id, submessage_id: stored.id, sender_id: stored.sender_id, content: stored.content },
      ...(audience.publicStream ? { public_stream: true } : {}),
    });
  });
}

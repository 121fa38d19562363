/**
 * GET /messages/{message_id}/history: Zulip's message_history, the message as it was after
 * each edit, oldest (the original) first, rebuilt backwards from the current message and its
 * edit history (Zulip's fill_edit_history_entries).
 */
import type { Actor, EditHistoryEntry } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { MessagesDeps } from '../deps.js';
import { realmSettings } from '@zc/shared/policy';
import { htmlDiff } from '../lib/html-diff.js';
import { accessMessage, viewerOf } from './get-messages.js';

export async function getMessageHistory(deps: MessagesDeps, actor: Actor, messageId: number): Promise<{ message_history: Record<string, unknown>[] }> {
  const realm = await deps.directory.realmFor(actor);
  if (!realmSettings(realm.settings).allow_edit_history) throw badRequest('Message edit history is disabled in this organization');
  const { row } = await accessMessage(deps.pool, viewerOf(actor), messageId);
  let content = row.content;
  let rendered = row.rendered_content;
  let topic = row.topic;
  const snapshots: Record<string, unknown>[] = [];
  for (const e of (row.edit_history ?? []) as EditHistoryEntry[]) {
    const snap: Record<string, unknown> = { content, rendered_content: rendered, timestamp: e.timestamp, topic, user_id: e.user_id };
    if (e.prev_topic !== undefined) {
      topic = e.prev_topic;
      snap.prev_topic = topic;
    }
    if (e.prev_content !== undefined) {
      snap.prev_content = e.prev_content;
      snap.prev_rendered_content = e.prev_rendered_content ?? '';
      snap.content_html_diff = htmlDiff(e.prev_rendered_content ?? '', rendered);
      content = e.prev_content;
      rendered = e.prev_rendered_content ?? '';
    }
    if (e.prev_stream !== undefined) {
      snap.prev_stream = e.prev_stream;
      if (e.stream !== undefined) snap.stream = e.stream;
    }
    snapshots.push(snap);
  }
  snapshots.push({ content, rendered_content: rendered, timestamp: Math.floor(row.date_sent.getTime() / 1000), topic, user_id: row.sender_id });
  return { message_history: snapshots.reverse() };
}

/**
 * The notification bot's posts after a topic edit or stream move (PATCH /messages/{id},
 * send_notification_to_old_thread / _new_thread): breadcrumbs in the old and new topics, or,
 * for a pure resolve/unresolve, only "… has marked this topic as resolved." in the topic.
 * Sent after the edit committed; a failure is logged, never reported as the edit failing.
 */
import { users } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { moveNotices, topicResolution } from '../lib/edit-rules.js';
import { editStore } from '../store/edit-store.js';
import type { RealmRow, StreamRow, UserRow } from '../store/read-model-store.js';
import { sendAsSystemBot } from './notification-bot.js';
import type { SendWriter } from './send-writer.js';

export interface MoveNotification {
  realm: RealmRow;
  editor: UserRow;
  from: { stream: StreamRow; topic: string };
  to: { stream: StreamRow; topic: string };
  movedCount: number;
  movedAll: boolean;
  notifyOld: boolean;
  notifyNew: boolean;
}

const silentMention = (u: { id: number; full_name: string }) => `@_**${u.full_name}|${u.id}**`;
const topicLink = (stream: StreamRow, topic: string) => `#**${stream.name}>${topic}**`;

export async function sendMoveNotifications(deps: MessagesDeps, writer: SendWriter, n: MoveNotification): Promise<void> {
  const resolution = n.from.stream.id === n.to.stream.id ? topicResolution(n.from.topic, n.to.topic) : null;
  const posts: Array<{ stream: StreamRow; topic: string; content: string }> = [];
  const user = silentMention(n.editor);
  if (resolution) {
    posts.push({ stream: n.to.stream, topic: n.to.topic, content: `${user} has marked this topic as ${resolution}.` });
  } else if (n.notifyOld || n.notifyNew) {
    // "This topic was moved" only when nothing is left behind in the old topic.
    const left = await editStore.topicMessageIds(deps.pool, n.from.stream.recipient_id, n.from.topic, 0);
    const notices = moveNotices({
      user,
      oldLocation: topicLink(n.from.stream, n.from.topic),
      newLocation: topicLink(n.to.stream, n.to.topic),
      movedCount: n.movedCount,
      movedAll: n.movedAll || left.length === 0,
    });
    if (n.notifyOld) posts.push({ stream: n.from.stream, topic: n.from.topic, content: notices.old });
    if (n.notifyNew) posts.push({ stream: n.to.stream, topic: n.to.topic, content: notices.new });
  }
  if (posts.length === 0) return;
  try {
    const botEmail = `notification-bot@${new URL(n.realm.url).hostname}`;
    const found = await deps.bus.request(users.resolve, { realm_id: n.realm.id, user_ids: [], emails: [botEmail] });
    const bot = found.users[0];
    if (!bot) {
      deps.log.warn({ realm_id: n.realm.id }, 'no notification bot; move notification skipped');
      return;
    }
    for (const p of posts) {
      await sendAsSystemBot(deps, writer, n.realm.id, bot, { type: 'stream', to: p.stream.id, topic: p.topic, content: p.content });
    }
  } catch (err) {
    deps.log.error({ err, realm_id: n.realm.id }, 'move notification failed');
  }
}

/**
 * Messages the realm's notification bot posts for other services (subscriptions:
 * notificationBotMessage): stream change notices and "X subscribed you to ..." direct
 * messages. Each is sent once: a redelivered event hits the same idempotency key.
 */
import { users, type NotificationBotMessage } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { checkSendMessage } from './send-message.js';
import type { SendWriter } from './send-writer.js';

/** The realm's notification bot (notification-bot@<realm host>), or undefined when the realm has none. */
export async function findNotificationBot(deps: MessagesDeps, realmId: number) {
  const realm = await deps.directory.ensureRealm(realmId);
  const email = `notification-bot@${new URL(realm.url).hostname}`;
  const found = await deps.bus.request(users.resolve, { realm_id: realmId, user_ids: [], emails: [email] });
  return found.users.find((u) => u.email.toLowerCase() === email || u.delivery_email.toLowerCase() === email);
}

export async function doPostNotificationBotMessage(deps: MessagesDeps, writer: SendWriter, e: NotificationBotMessage): Promise<void> {
  const bot = await findNotificationBot(deps, e.realm_id);
  if (!bot) {
    deps.log.warn({ realm_id: e.realm_id, key: e.key }, 'no notification bot; message skipped');
    return;
  }
  const target = e.to.type === 'stream' ? { type: 'stream', to: e.to.stream_id, topic: e.to.topic } : { type: 'private', to: [e.to.user_id] };
  await checkSendMessage(deps, writer, {
    actor: { realm_id: e.realm_id, user_id: bot.user_id, role: bot.role, email: bot.email, full_name: bot.full_name, is_bot: true },
    client: 'Internal',
    ...target,
    content: e.content,
    read_by_sender: true,
    idempotency_key: e.key,
    internal: true,
  });
}

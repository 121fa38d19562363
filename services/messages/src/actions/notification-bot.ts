/**
 * Messages the realm's system bots post for other services: the notification bot's stream
 * change notices and "X subscribed you to ..." direct messages (subscriptions:
 * notificationBotMessage), and any system bot's direct message asked through the messages
 * inbox (users: Welcome Bot greeting a new user). Each is sent once: a redelivered event hits
 * the same idempotency key.
 */
import { users, type NotificationBotMessage, type SystemBotMessage } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { checkSendMessage, type SendRequest } from './send-message.js';
import type { SendWriter } from './send-writer.js';

type SystemBotName = 'notification-bot' | 'welcome-bot';

/** One of the realm's system bots (<name>@<realm host>) as the users service has it, or undefined when the realm has none. */
async function lookUpSystemBot(deps: MessagesDeps, realmId: number, name: SystemBotName) {
  const realm = await deps.directory.ensureRealm(realmId);
  const email = `${name}@${new URL(realm.url).hostname}`;
  const found = await deps.bus.request(users.resolve, { realm_id: realmId, user_ids: [], emails: [email] });
  return found.users.find((u) => u.email.toLowerCase() === email || u.delivery_email.toLowerCase() === email);
}

type FoundBot = NonNullable<Awaited<ReturnType<typeof lookUpSystemBot>>>;

/**
 * System bots found lately, per service instance: a change that tells 35 users, and the
 * outbox's repeat of the same posts, ask the users service once rather than once a post. A
 * system bot stays the same account; its name and role here are at most BOT_MEMO_MS old.
 */
const BOT_MEMO_MS = 60_000;
const botMemo = new WeakMap<MessagesDeps, Map<string, { bot: FoundBot; at: number }>>();

async function findSystemBot(deps: MessagesDeps, realmId: number, name: SystemBotName): Promise<FoundBot | undefined> {
  let memo = botMemo.get(deps);
  if (!memo) botMemo.set(deps, (memo = new Map()));
  const key = `${realmId}:${name}`;
  const known = memo.get(key);
  if (known && performance.now() - known.at < BOT_MEMO_MS) return known.bot;
  const bot = await lookUpSystemBot(deps, realmId, name);
  if (bot) memo.set(key, { bot, at: performance.now() });
  else memo.delete(key);
  return bot;
}

/** A system bot as users.resolve answers for it. */
interface SystemBot {
  user_id: number;
  role: number;
  email: string;
  full_name: string;
}

/** Sends as one of the realm's system bots: no access or post-policy checks, read by the bot. */
export async function sendAsSystemBot(
  deps: MessagesDeps,
  writer: SendWriter,
  realmId: number,
  bot: SystemBot,
  post: Omit<SendRequest, 'actor' | 'client' | 'read_by_sender' | 'internal'>,
): Promise<number> {
  return checkSendMessage(deps, writer, {
    actor: { realm_id: realmId, user_id: bot.user_id, role: bot.role, email: bot.email, full_name: bot.full_name, is_bot: true },
    client: 'Internal',
    ...post,
    read_by_sender: true,
    internal: true,
  });
}

export async function doPostNotificationBotMessage(deps: MessagesDeps, writer: SendWriter, e: NotificationBotMessage): Promise<void> {
  // Realms made with ZC_WELCOME_MESSAGES off have no Welcome Bot: its posts still go out.
  const bot = (e.sender === 'welcome-bot' ? await findSystemBot(deps, e.realm_id, 'welcome-bot') : undefined) ?? (await findSystemBot(deps, e.realm_id, 'notification-bot'));
  if (!bot) {
    deps.log.warn({ realm_id: e.realm_id, key: e.key }, 'no notification bot; message skipped');
    return;
  }
  const target = e.to.type === 'stream' ? { type: 'stream', to: e.to.stream_id, topic: e.to.topic } : { type: 'private', to: [e.to.user_id] };
  await sendAsSystemBot(deps, writer, e.realm_id, bot, { ...target, content: e.content, idempotency_key: e.key });
}

/**
 * Posts `list` in its order within each conversation (a stream's topic, a user's direct
 * messages), and the conversations at once: their sends reach the writer together and
 * commit in a batch instead of one commit each (a subscribe that tells 35 users waited
 * 0.8 s for them one by one).
 */
export async function doPostNotificationBotMessages(deps: MessagesDeps, writer: SendWriter, list: readonly NotificationBotMessage[]): Promise<void> {
  const conversations = new Map<string, NotificationBotMessage[]>();
  for (const m of list) {
    const key = m.to.type === 'stream' ? `stream:${m.to.stream_id}:${m.to.topic.toLowerCase()}` : `dm:${m.to.user_id}`;
    const inOrder = conversations.get(key);
    if (inOrder) inOrder.push(m);
    else conversations.set(key, [m]);
  }
  await Promise.all(
    [...conversations.values()].map(async (inOrder) => {
      for (const m of inOrder) await doPostNotificationBotMessage(deps, writer, m);
    }),
  );
}

export async function doPostSystemBotMessage(deps: MessagesDeps, writer: SendWriter, e: SystemBotMessage): Promise<void> {
  const found = await deps.bus.request(users.resolve, { realm_id: e.realm_id, user_ids: [e.sender_id], emails: [] });
  const bot = found.users.find((u) => u.user_id === e.sender_id && u.is_bot);
  if (!bot) {
    deps.log.warn({ realm_id: e.realm_id, key: e.key, sender_id: e.sender_id }, 'no such system bot; message skipped');
    return;
  }
  await sendAsSystemBot(deps, writer, e.realm_id, bot, { type: 'private', to: [e.recipient_id], content: e.content, idempotency_key: e.key });
}

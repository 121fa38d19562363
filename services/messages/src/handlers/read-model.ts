/** Durable consumers feeding the read models, and the stream announcement. */
import type { Bus } from '@zc/shared/bus';
import { messagesInbox, subscriptionsEvents } from '@zc/shared/contracts';
import { doAnnounceStream } from '../actions/announce-stream.js';
import { doAddNewUserHistory } from '../actions/new-user-history.js';
import { doPostNotificationBotMessage, doPostSystemBotMessage } from '../actions/notification-bot.js';
import { SUBSCRIPTIONS_READ_MODEL_EVENTS, USERS_READ_MODEL_EVENTS, applySubscriptionsEvent, applyUsersEvent } from '../actions/read-model.js';
import { applyRealmEmojiChanged, REALM_EMOJI_READ_MODEL_EVENTS } from '../actions/realm-emoji.js';
import type { SendWriter } from '../actions/send-writer.js';
import type { MessagesDeps } from '../deps.js';

/** Starts the consumers (the bus stops them when the service stops). */
export async function startReadModelConsumers(bus: Bus, deps: MessagesDeps, writer: SendWriter): Promise<void> {
  await bus.consume(USERS_READ_MODEL_EVENTS, { durable: 'messages-users-read-model' }, (...e) => applyUsersEvent(deps, ...e));
  await bus.consume(SUBSCRIPTIONS_READ_MODEL_EVENTS, { durable: 'messages-subscriptions-read-model' }, (...e) => applySubscriptionsEvent(deps, ...e));
  await bus.consume(REALM_EMOJI_READ_MODEL_EVENTS, { durable: 'messages-realm-emoji-read-model' }, (_subject, payload) => applyRealmEmojiChanged(deps, payload));
  // Its own consumer, so a slow or failing announcement never holds up the read model.
  await bus.consume([subscriptionsEvents.streamAnnounced], { durable: 'messages-stream-announcements' }, (_subject, payload) =>
    doAnnounceStream(deps, writer, payload),
  );
  await bus.consume([subscriptionsEvents.notificationBotMessage], { durable: 'messages-notification-bot' }, (_subject, payload) =>
    doPostNotificationBotMessage(deps, writer, payload),
  );
  await bus.consume([messagesInbox.systemBotMessage], { durable: 'messages-system-bot' }, (_subject, payload) => doPostSystemBotMessage(deps, writer, payload));
  await bus.consume([messagesInbox.newUserHistory], { durable: 'messages-new-user-history' }, (_subject, payload) => doAddNewUserHistory(deps, payload));
}

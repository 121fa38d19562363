/** Bus adapters of the messages service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { messagesRpc, registerStateReply } from '@zc/shared/contracts';
import { checkDeleteMessage, doDeleteTopic } from '../actions/delete-message.js';
import { checkUpdateMessage } from '../actions/edit-message.js';
import { doMarkAllAsRead, doMarkStreamAsRead, doMarkTopicAsRead, doUpdateFlags, doUpdateFlagsForNarrow } from '../actions/flags.js';
import { doAnnounceStream } from '../actions/announce-stream.js';
import { doPostNotificationBotMessages } from '../actions/notification-bot.js';
import { checkAddReaction, checkRemoveReaction } from '../actions/reactions.js';
import { checkAddSubmessage } from '../actions/submessages.js';
import { doSyncStream } from '../actions/read-model.js';
import { renderPreview } from '../actions/render-message.js';
import { checkSendMessage } from '../actions/send-message.js';
import { checkSendTypingNotification } from '../actions/typing.js';
import type { SendWriter } from '../actions/send-writer.js';
import type { MessagesDeps } from '../deps.js';
import { canReadAnyMessage, getMessage, listMessages, matchesNarrow } from '../queries/get-messages.js';
import { getMessageHistory } from '../queries/message-history.js';
import { getReadReceipts } from '../queries/read-receipts.js';
import { getRegisterState } from '../queries/register-state.js';
import { listStreamTopics } from '../queries/topics.js';
import { messageStore } from '../store/message-store.js';
import { applyMutedUserChange } from '../actions/muted-users.js';

export function registerMessageHandlers(bus: Bus, deps: MessagesDeps, writer: SendWriter): void {
  bus.serve(messagesRpc.send, async (r) => ({ id: await checkSendMessage(deps, writer, r) }));
  bus.serve(messagesRpc.typing, async (r) => {
    await checkSendTypingNotification(deps, deps.typingExpiry, r);
    return {};
  });
  bus.serve(messagesRpc.list, (r) => listMessages(deps, r));
  bus.serve(messagesRpc.update, async (r) => {
    await checkUpdateMessage(deps, writer, r);
    return {};
  });
  bus.serve(messagesRpc.readReceipts, async (r) => ({ user_ids: await getReadReceipts(deps, r.actor, r.message_id) }));
  bus.serve(messagesRpc.history, (r) => getMessageHistory(deps, r.actor, r.message_id));
  bus.serve(messagesRpc.getOne, (r) => getMessage(deps, r.actor, r.message_id, r.apply_markdown));
  bus.serve(messagesRpc.matchesNarrow, async (r) => ({ messages: await matchesNarrow(deps, r.actor, r.msg_ids, r.narrow) }));
  bus.serve(messagesRpc.updateFlags, async (r) => ({ messages: await doUpdateFlags(deps, r.actor, r.messages, r.op, r.flag) }));
  bus.serve(messagesRpc.updateFlagsForNarrow, (r) => doUpdateFlagsForNarrow(deps, r));
  bus.serve(messagesRpc.markAllAsRead, async (r) => ({ complete: await doMarkAllAsRead(deps, r.actor) }));
  bus.serve(messagesRpc.markStreamAsRead, async (r) => {
    await doMarkStreamAsRead(deps, r.actor, r.stream_id);
    return {};
  });
  bus.serve(messagesRpc.markTopicAsRead, async (r) => {
    await doMarkTopicAsRead(deps, r.actor, r.stream_id, r.topic_name);
    return {};
  });
  bus.serve(messagesRpc.deleteMessage, async (r) => {
    await checkDeleteMessage(deps, r.actor, r.message_id);
    return {};
  });
  bus.serve(messagesRpc.deleteTopic, async (r) => ({ complete: await doDeleteTopic(deps, r.actor, r.stream_id, r.topic_name) }));
  bus.serve(messagesRpc.addReaction, async (r) => {
    await checkAddReaction(deps, r);
    return {};
  });
  bus.serve(messagesRpc.removeReaction, async (r) => {
    await checkRemoveReaction(deps, r);
    return {};
  });
  bus.serve(messagesRpc.addSubmessage, async (r) => {
    await checkAddSubmessage(deps, r);
    return {};
  });
  bus.serve(messagesRpc.streamTopics, async (r) => ({ topics: await listStreamTopics(deps, r.actor, r.stream_id) }));
  bus.serve(messagesRpc.render, async (r) => ({ rendered: await renderPreview(deps, r.actor, r.content) }));
  bus.serve(messagesRpc.registerState, async (r) => {
    const { snapshot, state } = await getRegisterState(deps, r.actor, r.fetch);
    return registerStateReply(snapshot, state);
  });
  bus.serve(messagesRpc.canReadAny, async (r) => ({ readable: await canReadAnyMessage(deps, r.actor, r.message_ids) }));
  bus.serve(messagesRpc.syncMutedUser, async (r) => {
    await applyMutedUserChange(deps, r);
    return {};
  });
  bus.serve(messagesRpc.syncStream, async (r) => {
    await doSyncStream(deps, r);
    return {};
  });
  bus.serve(messagesRpc.postNotices, async (r) => {
    await doPostNotificationBotMessages(deps, writer, r.messages);
    for (const a of r.announcements) await doAnnounceStream(deps, writer, a);
    return {};
  });
  bus.serve(messagesRpc.maxMessageId, async (r) => ({ max_message_id: await messageStore.maxMessageIdFor(deps.pool, r.user_id) }));
}

/**
 * The notification bot's posts of a change, made before the change is answered: Zulip sends
 * them in the change's own transaction, so a client that reads the stream's topics or its
 * direct messages right after the answer finds them there (zulip-terminal and bots do).
 *
 * The change's transaction has already written the same posts into this service's outbox,
 * so they are never lost: a messages service that is away, slow or overwhelmed only delays
 * them to the outbox's pace, and each post's idempotency key makes the request and the
 * outbox's event one post, whichever comes first. A change with many posts (a bulk
 * subscribe that tells thousands of users) leaves them to the outbox alone, so it is
 * answered within its caller's timeout.
 */
import { messagesRpc, type NotificationBotMessage, type StreamAnnouncement } from '@zc/shared/contracts';
import type { SubscriptionsDeps } from '../deps.js';

/** More posts than this go out through the outbox only (each takes a send: a few ms). */
export const MAX_NOTICES_POSTED_AT_ONCE = 50;
const POST_TIMEOUT_MS = 3000;

export interface Notices {
  messages: NotificationBotMessage[];
  announcements: StreamAnnouncement[];
}

export async function postNoticesNow(deps: SubscriptionsDeps, n: Notices): Promise<void> {
  const count = n.messages.length + n.announcements.length;
  if (count === 0 || count > MAX_NOTICES_POSTED_AT_ONCE) return;
  try {
    await deps.bus.request(messagesRpc.postNotices, { messages: n.messages, announcements: n.announcements }, { timeoutMs: POST_TIMEOUT_MS });
  } catch (err) {
    deps.log.warn({ err, notices: count }, 'messages service did not post the notices at once; they follow from the outbox');
  }
}

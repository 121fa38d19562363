/**
 * Read your writes across services: after a stream change commits, the messages service
 * stores the new row before the change is answered (messagesRpc.syncStream), so its read
 * paths stop showing a stream made private or archived to non-subscribers, and a renamed
 * stream takes messages under its new name, from the next request on. The domain event
 * still follows (same revision, so it changes nothing there and other consumers get it).
 */
import { messagesRpc } from '@zc/shared/contracts';
import type { SubscriptionsDeps } from '../deps.js';
import { toStreamRecord } from '../lib/stream-view.js';
import type { StreamRow } from '../store/stream-store.js';

export async function syncStreamToMessages(deps: SubscriptionsDeps, stream: StreamRow, subscriberIds: readonly number[]): Promise<void> {
  try {
    await deps.bus.request(messagesRpc.syncStream, { stream: toStreamRecord(stream), subscriber_ids: [...subscriberIds] }, { timeoutMs: 3000 });
  } catch (err) {
    // The change is committed; the domain event brings it to the read model a moment later.
    deps.log.warn({ err, stream_id: stream.id }, 'messages service did not take the stream change synchronously; its read model follows by event');
  }
}

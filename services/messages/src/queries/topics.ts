/**
 * GET /users/me/{stream_id}/topics: Zulip's get_topic_history_for_stream. With history
 * public to subscribers every topic of the stream counts; otherwise only the topics of
 * messages the user received.
 */
import { isGuest, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { MessagesDeps } from '../deps.js';
import { streamAccessFor } from '../actions/read-model.js';
import { topicStore, type TopicRow } from '../store/topic-store.js';

export async function listStreamTopics(deps: MessagesDeps, actor: Actor, streamId: number): Promise<TopicRow[]> {
  await deps.directory.realmFor(actor);
  const { stream, subscribed } = await streamAccessFor(deps, actor.realm_id, actor.user_id, { stream_id: streamId });
  // Zulip's access_stream_by_id: private streams and, for guests, every stream need a subscription.
  if (!stream || stream.is_archived || ((stream.invite_only || isGuest(actor)) && !subscribed)) throw badRequest('Invalid channel ID');
  return topicStore.topicsOf(deps.pool, stream.recipient_id, stream.history_public_to_subscribers ? undefined : actor.user_id);
}

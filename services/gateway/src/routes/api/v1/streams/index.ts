import type { FastifyInstance } from 'fastify';
import { LIMITS, messagesRpc, subscriptionsRpc } from '@zc/shared/contracts';
import { partiallyCompleted, success } from '@zc/shared/envelope';
import { bool, int, str } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';
import { retentionDays } from '../users/me/subscriptions/index.js';

const streamId = int({ min: 1 });

/** GET /api/v1/streams (spec 4.13), GET, PATCH and DELETE /api/v1/streams/{stream_id}, its members, and delete_topic. */
export default async function streamsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    const p = params(request, {
      include_public: bool().optional(true),
      include_web_public: bool().optional(false),
      include_subscribed: bool().optional(true),
      include_all_active: bool().optional(false),
      include_default: bool().optional(false),
      include_owner_subscribed: bool().optional(false),
    });
    return success(await bus.request(subscriptionsRpc.listStreams, { actor: request.actor, ...p }));
  });

  app.get<{ Params: { stream_id: string } }>('/:stream_id', async (request) => {
    params(request, {});
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    return success(await bus.request(subscriptionsRpc.getStream, { actor: request.actor, stream_id: id }));
  });

  app.patch<{ Params: { stream_id: string } }>('/:stream_id', async (request) => {
    const p = params(request, {
      description: str({ maxLength: LIMITS.maxStreamDescriptionLength }).optional(),
      new_name: str().optional(),
      is_private: bool().optional(),
      is_web_public: bool().optional(),
      history_public_to_subscribers: bool().optional(),
      stream_post_policy: int().optional(),
      is_announcement_only: bool().optional(),
      message_retention_days: retentionDays.optional(),
      // Zulip 7.0 named it with `_id`, 8.0 without; both take a system group's id.
      can_remove_subscribers_group_id: int().optional(),
      can_remove_subscribers_group: int().optional(),
    });
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    const { can_remove_subscribers_group: group, ...rest } = p;
    const groupId = rest.can_remove_subscribers_group_id ?? group;
    // Absent optional parameters stay absent on the bus (JSON drops undefined).
    return success(await bus.request(subscriptionsRpc.updateStream, { actor: request.actor, stream_id: id, ...rest, can_remove_subscribers_group_id: groupId }));
  });

  app.delete<{ Params: { stream_id: string } }>('/:stream_id', async (request) => {
    params(request, {});
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    return success(await bus.request(subscriptionsRpc.archiveStream, { actor: request.actor, stream_id: id }));
  });

  // Feature level 154-210 clients read partially_completed, later ones `complete`; both are answered.
  app.post<{ Params: { stream_id: string } }>('/:stream_id/delete_topic', async (request) => {
    const p = params(request, { topic_name: str() });
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    const { complete } = await bus.request(messagesRpc.deleteTopic, { actor: request.actor, stream_id: id, topic_name: p.topic_name });
    return complete ? success({ complete }) : partiallyCompleted({ complete });
  });

  app.get<{ Params: { stream_id: string } }>('/:stream_id/members', async (request) => {
    params(request, {});
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    return success(await bus.request(subscriptionsRpc.streamMembers, { actor: request.actor, stream_id: id }));
  });
}

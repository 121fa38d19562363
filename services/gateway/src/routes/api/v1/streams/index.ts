import type { FastifyInstance } from 'fastify';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const streamId = int({ min: 1 });

/** GET /api/v1/streams (spec 4.13) and GET /api/v1/streams/{stream_id}. */
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

  app.get<{ Params: { stream_id: string } }>('/:stream_id/members', async (request) => {
    params(request, {});
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    return success(await bus.request(subscriptionsRpc.streamMembers, { actor: request.actor, stream_id: id }));
  });
}

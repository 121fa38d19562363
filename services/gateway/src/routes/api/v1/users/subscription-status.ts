import type { FastifyInstance } from 'fastify';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const id = int({ min: 0 });

/** GET /api/v1/users/{user_id}/subscriptions/{stream_id}: whether that user is subscribed. */
export default async function subscriptionStatusRoutes(app: FastifyInstance) {
  app.get<{ Params: { user_id: string; stream_id: string } }>('/:user_id/subscriptions/:stream_id', async (request) => {
    params(request, {});
    const userId = id.decode(request.params.user_id, 'user_id');
    const streamId = id.decode(request.params.stream_id, 'stream_id');
    return success(await app.deps.bus.request(subscriptionsRpc.subscriptionStatus, { actor: request.actor, user_id: userId, stream_id: streamId }));
  });
}

import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

const streamId = int({ min: 0 });

/** GET /api/v1/users/me/{stream_id}/topics: the stream's topics with their newest message id, newest first. */
export default async function streamTopicsRoutes(app: FastifyInstance) {
  app.get<{ Params: { stream_id: string } }>('/:stream_id/topics', async (request) => {
    params(request, {});
    const id = streamId.decode(request.params.stream_id, 'stream_id');
    return success(await app.deps.bus.request(messagesRpc.streamTopics, { actor: request.actor, stream_id: id }));
  });
}

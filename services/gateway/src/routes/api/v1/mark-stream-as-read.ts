import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** POST /api/v1/mark_stream_as_read (spec 4.4). */
export default async function markStreamAsReadRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { stream_id: int() });
    return success(await app.deps.bus.request(messagesRpc.markStreamAsRead, { actor: request.actor, ...p }));
  });
}

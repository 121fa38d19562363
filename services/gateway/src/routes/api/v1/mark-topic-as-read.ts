import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, str } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** POST /api/v1/mark_topic_as_read (spec 4.5). */
export default async function markTopicAsReadRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { stream_id: int(), topic_name: str() });
    return success(await app.deps.bus.request(messagesRpc.markTopicAsRead, { actor: request.actor, ...p }));
  });
}

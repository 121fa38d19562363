import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { partiallyCompleted, success } from '@zc/shared/envelope';
import { params } from '../../../plugins/params.js';

/** POST /api/v1/mark_all_as_read (spec 4.3): HTTP 200 partially_completed when the time limit ran out. */
export default async function markAllAsReadRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    params(request, {});
    const { complete } = await app.deps.bus.request(messagesRpc.markAllAsRead, { actor: request.actor }, { timeoutMs: 30_000 });
    return complete ? success() : partiallyCompleted();
  });
}

import type { FastifyInstance } from 'fastify';
import { messagesRpc, users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { params } from '../../../../../plugins/params.js';

/** GET /api/v1/users/me: the caller's account (users service) and max_message_id (messages service). */
export default async function meRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.get('/', async (request) => {
    params(request, {});
    const [me, { max_message_id }] = await Promise.all([
      bus.request(users.me, { actor: request.actor }),
      bus.request(messagesRpc.maxMessageId, { realm_id: request.actor.realm_id, user_id: request.actor.user_id }),
    ]);
    return success({ ...me, max_message_id });
  });
}

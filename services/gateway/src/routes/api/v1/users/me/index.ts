import type { FastifyInstance } from 'fastify';
import { messagesRpc, users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { params } from '../../../../../plugins/params.js';

/**
 * /api/v1/users/me: GET the caller's account (users service) with max_message_id (messages
 * service); DELETE deactivates it; POST api_key/regenerate replaces its API key.
 */
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

  app.delete('/', async (request) => {
    params(request, {});
    await bus.request(users.deactivate, { actor: request.actor, user_id: request.actor.user_id });
    return success();
  });

  app.post('/api_key/regenerate', async (request) => {
    params(request, {});
    return success(await bus.request(users.regenerateApiKey, { actor: request.actor }));
  });
}

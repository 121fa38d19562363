import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int, str } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const viewParams = { client_gravatar: bool().optional(true), include_custom_profile_fields: bool().optional(false) };

/** /api/v1/users (spec 4.15, 4.16) and /api/v1/users/{user_id|email} (spec 4.23). */
export default async function usersRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    const p = params(request, viewParams);
    return success(await bus.request(users.list, { actor: request.actor, ...p }));
  });

  app.post('/', async (request) => {
    const p = params(request, { email: str(), password: str(), full_name: str() });
    return success(await bus.request(users.create, { actor: request.actor, ...p }));
  });

  app.delete<{ Params: { user_id: string } }>('/:user_id', async (request) => {
    params(request, {});
    const userId = int({ min: 1 }).decode(request.params.user_id, 'user_id');
    await bus.request(users.deactivate, { actor: request.actor, user_id: userId });
    return success();
  });

  app.get<{ Params: { who: string } }>('/:who', async (request) => {
    const p = params(request, viewParams);
    const who = request.params.who;
    const by = /^\d+$/.test(who) ? { user_id: Number(who) } : { email: who };
    return success(await bus.request(users.get, { actor: request.actor, ...by, ...p }));
  });
}

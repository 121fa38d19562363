import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { params } from '../../../../../plugins/params.js';

/** GET /api/v1/users/me: the caller's own account. */
export default async function meRoutes(app: FastifyInstance) {
  app.get('/', async (request) => {
    params(request, {});
    return success(await app.deps.bus.request(users.me, { actor: request.actor }));
  });
}

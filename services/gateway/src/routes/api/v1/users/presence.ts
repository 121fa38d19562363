import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { params } from '../../../../plugins/params.js';

/** GET /api/v1/users/{user_id_or_email}/presence. */
export default async function userPresenceRoutes(app: FastifyInstance) {
  app.get<{ Params: { who: string } }>('/:who/presence', async (request) => {
    params(request, {});
    const who = request.params.who;
    if (/^\d+$/.test(who) && !Number.isSafeInteger(Number(who))) throw badRequest('No such user');
    const by = /^\d+$/.test(who) ? { user_id: Number(who) } : { email: who };
    return success(await app.deps.bus.request(users.userPresence, { actor: request.actor, ...by }));
  });
}

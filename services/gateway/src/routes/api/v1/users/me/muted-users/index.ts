import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

/** /api/v1/users/me/muted_users/{muted_user_id}: mute and unmute a user (FL 48). */
export default async function mutedUsersRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const mutedUserId = (raw: string) => int({ min: 0 }).decode(raw, 'muted_user_id');

  app.post<{ Params: { muted_user_id: string } }>('/:muted_user_id', async (request) => {
    params(request, {});
    await bus.request(users.muteUser, { actor: request.actor, muted_user_id: mutedUserId(request.params.muted_user_id) });
    return success();
  });
  app.delete<{ Params: { muted_user_id: string } }>('/:muted_user_id', async (request) => {
    params(request, {});
    await bus.request(users.unmuteUser, { actor: request.actor, muted_user_id: mutedUserId(request.params.muted_user_id) });
    return success();
  });
}

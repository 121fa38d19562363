import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, str } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

/** POST /api/v1/users/me/status: the caller's status text and emoji, and the legacy `away`. */
export default async function userStatusRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.post('/', async (request) => {
    const p = params(request, {
      away: bool().optional(),
      status_text: str().optional(),
      emoji_name: str().optional(),
      emoji_code: str().optional(),
      reaction_type: str().optional(),
    });
    await bus.request(users.updateStatus, { actor: request.actor, ...p });
    return success();
  });
}

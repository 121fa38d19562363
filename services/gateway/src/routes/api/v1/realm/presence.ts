import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int } from '@zc/shared/params';
import { modernPresenceFromStore, presenceOf } from '../../../../lib/presence.js';
import { params } from '../../../../plugins/params.js';

/** How much presence a fetch wants (POST /users/me/presence and GET /realm/presence). */
export const presenceFetchParams = {
  slim_presence: bool().optional(false),
  last_update_id: int({ min: -1 }).optional(),
  history_limit_days: int({ min: 0 }).optional(),
};

/**
 * GET /api/v1/realm/presence: every visible user's presence (legacy format unless asked
 * otherwise; the modern one comes straight from the presence store, lib/presence.ts).
 */
export default async function realmPresenceRoutes(app: FastifyInstance) {
  const { reader } = presenceOf(app);
  app.get('/', async (request) => {
    const p = params(request, presenceFetchParams);
    return success((await modernPresenceFromStore(reader, request.actor, p)) ?? (await app.deps.bus.request(users.realmPresence, { actor: request.actor, ...p })));
  });
}

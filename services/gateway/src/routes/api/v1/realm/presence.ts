import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { bool, int } from '@zc/shared/params';
import { presenceFromStore, presenceOf } from '../../../../lib/presence.js';
import { sendRawSuccess, sendSuccessMembers } from '../../../../lib/raw-success.js';
import { params } from '../../../../plugins/params.js';

/** How much presence a fetch wants (POST /users/me/presence and GET /realm/presence). */
export const presenceFetchParams = {
  slim_presence: bool().optional(false),
  last_update_id: int({ min: -1 }).optional(),
  history_limit_days: int({ min: 0 }).optional(),
};

/**
 * GET /api/v1/realm/presence: every visible user's presence (legacy format unless asked
 * otherwise; both come straight from the presence store, lib/presence.ts).
 */
export default async function realmPresenceRoutes(app: FastifyInstance) {
  const presence = presenceOf(app);
  app.get('/', async (request, reply) => {
    const p = params(request, presenceFetchParams);
    const members = await presenceFromStore(presence, request.actor, p);
    if (members) return sendSuccessMembers(request, reply, members);
    // The realm's visibility is not loaded: the users service loads it and answers, relayed without re-parsing.
    return sendRawSuccess(request, reply, await app.deps.bus.requestRaw(users.realmPresence, { actor: request.actor, ...p }));
  });
}

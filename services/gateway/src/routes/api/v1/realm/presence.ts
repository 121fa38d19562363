import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int } from '@zc/shared/params';
import { modernPresenceFromStore, presenceOf } from '../../../../lib/presence.js';
import { sendRawSuccess } from '../../../../lib/raw-success.js';
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
  app.get('/', async (request, reply) => {
    const p = params(request, presenceFetchParams);
    const modern = await modernPresenceFromStore(reader, request.actor, p);
    if (modern) return success(modern);
    // The legacy format (by email) comes from the users service, relayed without re-parsing.
    return sendRawSuccess(request, reply, await app.deps.bus.requestRaw(users.realmPresence, { actor: request.actor, ...p }));
  });
}

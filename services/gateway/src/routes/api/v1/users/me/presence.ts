import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { bool, custom } from '@zc/shared/params';
import { legacyPresenceFromStore, modernPresenceFromStore, presenceOf, storeSteadyPing } from '../../../../../lib/presence.js';
import { sendRawSuccess, sendSuccessMembers } from '../../../../../lib/raw-success.js';
import { params } from '../../../../../plugins/params.js';
import { presenceFetchParams } from '../../realm/presence.js';

const status = custom((raw) => {
  if (raw !== 'active' && raw !== 'idle') throw badRequest(`Invalid status: ${String(raw)}`);
  return raw;
});

/**
 * POST /api/v1/users/me/presence: reports the caller's status and (unless ping_only) returns
 * the realm's presence. `new_user_input` only feeds Zulip's usage statistics, which we do not
 * keep, so it is accepted and has no effect. Steady pings and modern-format answers are
 * served from the presence store here; the rest by the users service (lib/presence.ts).
 */
export default async function myPresenceRoutes(app: FastifyInstance) {
  const presence = presenceOf(app);
  const { store, reader } = presence;
  app.post('/', async (request, reply) => {
    const p = params(request, { status, ping_only: bool().optional(false), new_user_input: bool().optional(false), ...presenceFetchParams });
    const { new_user_input: _unused, status: reported, ping_only, ...fetch } = p;
    const { actor } = request;
    const usersService = () => app.deps.bus.request(users.updatePresence, { actor, status: reported, ping_only, ...fetch });
    if (ping_only) return success((await storeSteadyPing(store, actor, reported)) ? {} : await usersService());
    // The ping and the read go out together, in that order on one connection, so the answer
    // waits for one Redis round trip rather than two and still includes this ping.
    const [stored, modern] = await Promise.all([storeSteadyPing(store, actor, reported), modernPresenceFromStore(reader, actor, fetch)]);
    if (!stored) return success(await usersService());
    if (modern) return sendSuccessMembers(request, reply, modern);
    // The legacy format (by email) from this replica's copies, emails cached (shared presence/legacy.ts).
    const legacy = await legacyPresenceFromStore(presence, actor, fetch);
    if (legacy) return sendSuccessMembers(request, reply, legacy);
    return sendRawSuccess(request, reply, await app.deps.bus.requestRaw(users.realmPresence, { actor, ...fetch }));
  });
}

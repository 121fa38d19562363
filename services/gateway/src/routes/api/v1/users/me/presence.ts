import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { users, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { bool, custom } from '@zc/shared/params';
import { pingThenPresence, presenceOf, storeSteadyPing } from '../../../../../lib/presence.js';
import { sendRawSuccess, sendSuccessMembers } from '../../../../../lib/raw-success.js';
import { paramsCheckingCredentials, takeCredentialCheck, type CredentialCheck } from '../../../../../plugins/auth.js';
import { presenceFetchParams } from '../../realm/presence.js';

const status = custom((raw) => {
  if (raw !== 'active' && raw !== 'idle') throw badRequest(`Invalid status: ${String(raw)}`);
  return raw;
});

const pingParams = { status, ping_only: bool().optional(false), new_user_input: bool().optional(false), ...presenceFetchParams };

/**
 * POST /api/v1/users/me/presence: reports the caller's status and (unless ping_only) returns
 * the realm's presence. `new_user_input` only feeds Zulip's usage statistics, which we do not
 * keep, so it is accepted and has no effect. Steady pings and the answers (either format)
 * are served from the presence store here; the rest by the users service (lib/presence.ts).
 *
 * A cached key's credential tokens are compared by the ping's own script
 * (`credentialsCheckedByRoute`), so a steady ping is one Redis round trip in all: every
 * client of the realm sends one a minute.
 */
export default async function myPresenceRoutes(app: FastifyInstance) {
  const presence = presenceOf(app);
  const { store } = presence;

  async function answer(request: FastifyRequest, reply: FastifyReply, actor: Actor, check: CredentialCheck | null): Promise<unknown> {
    const p = await paramsCheckingCredentials(request, pingParams, check);
    const { new_user_input: _unused, status: reported, ping_only, ...fetch } = p;
    const usersService = () => app.deps.bus.request(users.updatePresence, { actor, status: reported, ping_only, ...fetch });
    if (ping_only) {
      // Nothing is read after a ping-only ping: it may share its round trip with others.
      const ping = await storeSteadyPing(store, actor, reported, check, { coalesced: true });
      if (ping === 'credentials-moved') return answer(request, reply, await (check as CredentialCheck).recheck(), null);
      // The steady ping's empty answer as bytes: no serialiser and no preSerialization hook for the most frequent request.
      if (ping === 'stored') return sendSuccessMembers(request, reply, []);
      return success(await usersService());
    }
    // One Redis round trip for the ping and the read, which includes this ping (lib/presence.ts).
    const [ping, members] = await pingThenPresence(presence, actor, reported, check, fetch);
    if (ping === 'credentials-moved') return answer(request, reply, await (check as CredentialCheck).recheck(), null);
    if (ping === 'for-users-service') return success(await usersService());
    if (members) return sendSuccessMembers(request, reply, members);
    // The realm's visibility is not loaded: the users service loads it and answers, relayed without re-parsing.
    return sendRawSuccess(request, reply, await app.deps.bus.requestRaw(users.realmPresence, { actor, ...fetch }));
  }

  app.post('/', { config: { credentialsCheckedByRoute: true } }, async (request, reply) => answer(request, reply, request.actor, takeCredentialCheck(request)));
}

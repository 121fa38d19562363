import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { users, type Actor } from '@zc/shared/contracts';
import { bool, int, parseParams, type ParamValues } from '@zc/shared/params';
import { DECLINE } from '../../../../lib/fast-lane.js';
import { checkedPresenceFromStore, presenceForLane, presenceOf } from '../../../../lib/presence.js';
import { sendRawSuccess, sendSuccessMembers, successMembersBody } from '../../../../lib/raw-success.js';
import { paramsCheckingCredentials, takeCredentialCheck, type CredentialCheck } from '../../../../plugins/auth.js';
import { declaredParams } from '../../../../plugins/params.js';

/** How much presence a fetch wants (POST /users/me/presence and GET /realm/presence). */
export const presenceFetchParams = {
  slim_presence: bool().optional(false),
  last_update_id: int({ min: -1 }).optional(),
  history_limit_days: int({ min: 0 }).optional(),
};

/**
 * GET /api/v1/realm/presence: every visible user's presence (legacy format unless asked
 * otherwise; both come straight from the presence store, lib/presence.ts). A cached key's
 * credential tokens are compared by the read's own script (`credentialsCheckedByRoute`), so
 * a fetch is one Redis round trip, as a ping is.
 */
export default async function realmPresenceRoutes(app: FastifyInstance) {
  const presence = presenceOf(app);

  async function answer(request: FastifyRequest, reply: FastifyReply, actor: Actor, check: CredentialCheck | null): Promise<unknown> {
    const p = await paramsCheckingCredentials(request, presenceFetchParams, check);
    const members = await checkedPresenceFromStore(presence, actor, check, p);
    if (members === 'credentials-moved') return answer(request, reply, await (check as CredentialCheck).recheck(), null);
    if (members) return sendSuccessMembers(request, reply, members);
    // The realm's visibility is not loaded: the users service loads it and answers, relayed
    // without re-parsing (request.actor: the actor as checked, should the check have renewed it).
    return sendRawSuccess(request, reply, await app.deps.bus.requestRaw(users.realmPresence, { actor: request.actor, ...p }));
  }

  app.get('/', { config: { credentialsCheckedByRoute: true } }, async (request, reply) => answer(request, reply, request.actor, takeCredentialCheck(request)));

  // The plain fetch in the fast lane (lib/fast-lane.ts): clients that read presence this way
  // ask every minute, and the answer is large. A refused parameter, credentials that moved, or
  // a realm this replica holds no copy of are Fastify's to answer.
  declaredParams.set(`GET ${app.prefix}`, presenceFetchParams);
  app.lane.add('GET', app.prefix, Object.keys(presenceFetchParams), async ({ params: query, credentials }) => {
    let p: ParamValues<typeof presenceFetchParams>;
    try {
      p = parseParams(query, presenceFetchParams).values;
    } catch {
      return DECLINE;
    }
    const members = await presenceForLane(presence, credentials.actor, { keys: credentials.keys, values: credentials.tokens }, p);
    return members ? { body: successMembersBody(members, null) } : DECLINE;
  });
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { users, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { bool, custom, parseParams, type ParamValues } from '@zc/shared/params';
import { DECLINE } from '../../../../../lib/fast-lane.js';
import { humanPingThenPresence, pingThenPresence, presenceOf, storeHumanPing, storeSteadyPing } from '../../../../../lib/presence.js';
import { rawSuccessText, sendRawSuccess, sendSuccessMembers, successMembersBody } from '../../../../../lib/raw-success.js';
import { paramsCheckingCredentials, takeCredentialCheck, type CredentialCheck } from '../../../../../plugins/auth.js';
import { declaredParams } from '../../../../../plugins/params.js';
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

  app.post(
    '/',
    // A body the fast lane read before handing the request on is parsed from the bytes it read.
    { config: { credentialsCheckedByRoute: true }, preParsing: async (request, _reply, payload) => app.lane.payload(request.raw, payload) },
    async (request, reply) => answer(request, reply, request.actor, takeCredentialCheck(request)),
  );

  // The plain ping in the fast lane (lib/fast-lane.ts): every open client sends one a minute,
  // and Fastify's routing, hooks and body parsing cost more of the gateway's CPU than the
  // ping's one Redis round trip. The lane gives the request to the route only while nothing is
  // written: a refused parameter, a bot, credentials that moved, or a ping the users service
  // must take (the user comes online, or the realm is not loaded) all leave the store as it
  // was. Once a fetch's ping is stored, the lane answers whatever comes, as the route would.
  declaredParams.set(`POST ${app.prefix}`, pingParams);
  app.lane.add('POST', app.prefix, Object.keys(pingParams), async ({ params, credentials }) => {
    const { actor, keys, tokens } = credentials;
    if (actor.is_bot) return DECLINE;
    let p: ParamValues<typeof pingParams>;
    try {
      p = parseParams(params, pingParams).values;
    } catch {
      return DECLINE;
    }
    const { new_user_input: _unused, status: reported, ping_only, ...fetch } = p;
    if (ping_only) {
      const ping = await storeHumanPing(store, actor, reported, { keys, tokens }, { coalesced: true });
      return ping === 'stored' ? { body: successMembersBody([], null) } : DECLINE;
    }
    const [ping, members] = await humanPingThenPresence(presence, actor, reported, { keys, tokens }, fetch);
    if (ping !== 'stored') return DECLINE;
    if (members) return { body: successMembersBody(members, null) };
    return { body: rawSuccessText(await app.deps.bus.requestRaw(users.realmPresence, { actor, ...fetch }), null) };
  });
}

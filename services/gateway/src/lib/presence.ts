/**
 * The gateway's share of presence, the most frequent request of a chat server (every open
 * client, every minute). A steady client's ping is written straight into the presence store
 * (one Redis script) and a fetch answered from this replica's copy of the realm (with the
 * ping, one script too), without the bus hop to the users service, which owns presence and
 * does everything else: loading who may be seen from PostgreSQL, recording a ping that comes
 * online and announcing it, the legacy format's display emails. Zulip's timing rules live in
 * the store's script, which both use.
 *
 * A deactivated user never gets this far: deactivation replaces the user's credential token
 * before it answers, and the ping's script compares that token (with the realm's) before it
 * writes, so the route re-checks their key with the users service, which refuses it.
 */
import { PRESENCE_TIMING, users, type Actor } from '@zc/shared/contracts';
import type { FastifyInstance } from 'fastify';
import type { CredentialCheck } from '../plugins/auth.js';
import type { SuccessMembers } from './raw-success.js';
import {
  PresencePeople,
  PresenceReader,
  legacyPresenceListing,
  legacyPresencesParts,
  legacyRealmPresences,
  PresenceStore,
  entriesInWindow,
  lastUpdateIdOf,
  modernMemberBytes,
  modernRealmPresences,
  presenceAnswerTail,
  presencesMemberParts,
  wantsModernPresence,
  type PingOutcome,
  type PresenceFetch,
  type RealmPresence,
  type RealmView,
} from '@zc/shared/presence';

/**
 * How long a steady ping-only ping waits for others to share its Redis round trip (the
 * store's `coalesced` pings). 10,000 online users ping 166 times a second, about 8 per
 * window; a client does not wait on a ping-only answer (it carries nothing), so 50 ms more
 * is unseen, while a round trip (a pipeline, its socket write and read) cost about 160 µs of
 * the gateway's CPU: with 20 ms windows, about 3 pings shared each, a tenth of a ping's cost.
 */
const PING_WINDOW_MS = 50;

// Keyed by the app's deps, which every route's (encapsulated) Fastify instance shares.
const perApp = new WeakMap<object, GatewayPresence>();

export interface GatewayPresence {
  store: PresenceStore;
  reader: PresenceReader;
  /** Display emails for the legacy format, asked of the users service (shared presence/legacy.ts). */
  people: PresencePeople;
  bus: FastifyInstance['deps']['bus'];
}

/** The gateway's presence store and its copies of realms' presence and people, one per app (its routes share them). */
export function presenceOf(app: FastifyInstance): GatewayPresence {
  let p = perApp.get(app.deps);
  if (!p) {
    const { redis, config, bus } = app.deps;
    const store = new PresenceStore(redis, config.redisPrefix, { pingWindowMs: PING_WINDOW_MS });
    const people = new PresencePeople();
    p = { store, reader: new PresenceReader(store), people, bus };
    perApp.set(app.deps, p);
  }
  return p;
}

/** What became of a ping the gateway tried to store itself. */
export type SteadyPing = 'stored' | 'for-users-service' | 'credentials-moved';

/** The credential tokens a cached key was checked under, which a ping's script compares before writing (auth plugin). */
export type ExpectedTokens = Pick<CredentialCheck, 'keys' | 'tokens'>;

/**
 * Stores a ping if nothing but storing is needed: `for-users-service` when the users service
 * must take it (the realm's visibility is not loaded yet, or the user comes online and is
 * announced). With the request's pending credential check (auth plugin), the ping's script
 * compares the credential tokens first and writes nothing when they moved
 * (`credentials-moved`: the caller re-checks the key and tries again). `coalesced` lets the
 * ping share a round trip with others (PING_WINDOW_MS), for a caller that reads nothing after it.
 */
export async function storeSteadyPing(
  store: PresenceStore,
  actor: Actor,
  status: 'active' | 'idle',
  check: CredentialCheck | null,
  o: { coalesced?: boolean; nowMs?: number } = {},
): Promise<SteadyPing> {
  // Bots have no presence (Zulip lists none): their pings change nothing, once they are known to be allowed.
  if (actor.is_bot) {
    await check?.verify();
    return 'stored';
  }
  return storeHumanPing(store, actor, status, check, o);
}

/**
 * `storeSteadyPing` for a user who is not a bot, the tokens compared by the ping's script
 * alone: anything but `stored` has written nothing.
 */
export async function storeHumanPing(
  store: PresenceStore,
  actor: Actor,
  status: 'active' | 'idle',
  expect: ExpectedTokens | null,
  o: { coalesced?: boolean; nowMs?: number } = {},
): Promise<SteadyPing> {
  const p = steadyPingRequest(actor, status, expect, o.nowMs ?? Date.now());
  return steadyOutcome(await store.ping(actor.realm_id, actor.user_id, p.active, p.nowSeconds, p.rules, true, p.expect, o.coalesced === true));
}

/** A steady ping as the store takes it (quiet only; conditional on the credential tokens of a pending check). */
function steadyPingRequest(actor: Actor, status: 'active' | 'idle', check: ExpectedTokens | null, nowMs: number) {
  const expect = check ? { keys: check.keys, values: check.tokens } : { keys: [], values: [] };
  return { userId: actor.user_id, active: status === 'active', nowSeconds: Math.floor(nowMs / 1000), rules: PRESENCE_TIMING, quietOnly: true, expect };
}

function steadyOutcome(outcome: PingOutcome): SteadyPing {
  if (outcome.kind === 'unexpected') return 'credentials-moved';
  return outcome.kind === 'recorded' || outcome.kind === 'hidden' ? 'stored' : 'for-users-service';
}

/**
 * A fetch's steady ping and then the realm's presence (as `presenceFromStore`; undefined beside
 * a ping that was not stored, or when the users service must answer). When this replica holds
 * a copy of the realm, both are one Redis script (one command, one reply); otherwise the ping
 * and the read go out together in one write, in that order. Either way the read sees the
 * ping, and the answer is made only once the ping found the credentials unchanged.
 */
export async function pingThenPresence(
  p: GatewayPresence,
  actor: Actor,
  status: 'active' | 'idle',
  check: CredentialCheck | null,
  fetch: PresenceFetch,
  nowMs = Date.now(),
): Promise<[SteadyPing, SuccessMembers | undefined]> {
  if (!actor.is_bot) return humanPingThenPresence(p, actor, status, check, fetch, nowMs);
  const [ping, view] = await Promise.all([storeSteadyPing(p.store, actor, status, check, { nowMs }), p.reader.read(actor.realm_id)]);
  return answerAfterPing(p, actor, ping, view, fetch, nowMs);
}

/** `pingThenPresence` for a user who is not a bot (as `storeHumanPing`: a ping not `stored` has written nothing). */
export async function humanPingThenPresence(
  p: GatewayPresence,
  actor: Actor,
  status: 'active' | 'idle',
  expect: ExpectedTokens | null,
  fetch: PresenceFetch,
  nowMs = Date.now(),
): Promise<[SteadyPing, SuccessMembers | undefined]> {
  const both = await p.reader.pingThenRead(actor.realm_id, steadyPingRequest(actor, status, expect, nowMs));
  const [ping, view] = both
    ? [steadyOutcome(both.ping), both.view]
    : await Promise.all([storeHumanPing(p.store, actor, status, expect, { nowMs }), p.reader.read(actor.realm_id)]);
  return answerAfterPing(p, actor, ping, view, fetch, nowMs);
}

/** The fetch's answer once its ping is stored and this replica holds the realm's view; else none. */
async function answerAfterPing(
  p: GatewayPresence,
  actor: Actor,
  ping: SteadyPing,
  view: RealmView | undefined,
  fetch: PresenceFetch,
  nowMs: number,
): Promise<[SteadyPing, SuccessMembers | undefined]> {
  if (ping !== 'stored' || !view) return [ping, undefined];
  return [ping, await answerFromView(p, actor, view, fetch, nowMs)];
}

/**
 * The realm's presence (users.realmPresence's answer) from this replica's copy of the realm
 * brought up to date (shared presence/reader.ts), as the reply's members, or undefined when
 * the users service must answer (the realm's visibility is not loaded yet).
 */
export async function presenceFromStore(p: GatewayPresence, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<SuccessMembers | undefined> {
  const view = await p.reader.read(actor.realm_id);
  return view && answerFromView(p, actor, view, fetch, nowMs);
}

/**
 * A fetch without a ping (GET /realm/presence) for a request holding a pending credential
 * check (auth plugin): when this replica holds a copy of the realm, the read's script
 * compares the tokens itself (`credentials-moved` when they moved: nothing was read), so the
 * fetch is one Redis round trip; otherwise the check is made first. Else as `presenceFromStore`.
 */
export async function checkedPresenceFromStore(p: GatewayPresence, actor: Actor, check: CredentialCheck | null, fetch: PresenceFetch, nowMs = Date.now()): Promise<SuccessMembers | undefined | 'credentials-moved'> {
  if (!check) return presenceFromStore(p, actor, fetch, nowMs);
  const r = await p.reader.readExpecting(actor.realm_id, { keys: check.keys, values: check.tokens });
  if (!r) return presenceFromStore(p, await check.verify(), fetch, nowMs);
  if (r.kind === 'unexpected') return 'credentials-moved';
  return r.view && answerFromView(p, actor, r.view, fetch, nowMs);
}

/**
 * A fetch without a ping in the fast lane (GET /realm/presence): the answer when this replica
 * holds a copy of the realm and the read's script found the key's tokens as cached; else
 * undefined, having changed nothing, for Fastify's path to answer (it loads the realm, or
 * checks the key afresh).
 */
export async function presenceForLane(p: GatewayPresence, actor: Actor, expect: { keys: [string, string]; values: [string, string] }, fetch: PresenceFetch, nowMs = Date.now()): Promise<SuccessMembers | undefined> {
  const r = await p.reader.readExpecting(actor.realm_id, expect);
  if (!r || r.kind === 'unexpected' || !r.view) return undefined;
  return answerFromView(p, actor, r.view, fetch, nowMs);
}

/** Whether a fetch lists everyone seen in the default window (a client's first fetch, and every fetch without `last_update_id`). */
const defaultWindow = (f: PresenceFetch) => f.history_limit_days === undefined && !(f.last_update_id !== undefined && f.last_update_id > 0);

/**
 * The answer in the format the fetch wants. A default-window fetch takes `presences` whole as
 * kept for the copy's revision (shared presence/modern-blocks.ts and legacy.ts), any other is
 * joined from cached per-entry bytes.
 */
function answerFromView(p: GatewayPresence, actor: Actor, view: RealmView, fetch: PresenceFetch, nowMs: number): SuccessMembers | Promise<SuccessMembers> {
  if (view.disabled) return ['"presences":{}', presenceAnswerTail(nowMs, -1)];
  if (wantsModernPresence(fetch)) {
    if (defaultWindow(fetch)) {
      const { bytes, lastUpdateId } = modernRealmPresences(view.copy, view.revision, view.entries, nowMs);
      return [bytes, presenceAnswerTail(nowMs, Math.max(lastUpdateId, fetch.last_update_id ?? -1))];
    }
    const entries = entriesInWindow({ realmDisabled: false, entries: view.entries }, fetch, nowMs) ?? [];
    return [presencesMemberParts(entries.map(modernMemberBytes)), presenceAnswerTail(nowMs, lastUpdateIdOf(entries, fetch))];
  }
  return legacyAnswer(p, actor, view, fetch, nowMs);
}

/** The legacy format (by email), display emails from this replica's copy (shared presence/legacy.ts). */
async function legacyAnswer(p: GatewayPresence, actor: Actor, view: RealmView & { disabled: false }, fetch: PresenceFetch, nowMs: number): Promise<SuccessMembers> {
  const load = async (ids: readonly number[]) => {
    const r = await p.bus.request(users.presenceEmails, { actor, user_ids: [...ids] });
    return new Map(Object.entries(r.emails).map(([id, email]) => [Number(id), email]));
  };
  const people = { copy: p.people, realmId: actor.realm_id, token: view.peopleToken, load };
  if (defaultWindow(fetch)) {
    const { bytes, lastUpdateId } = await legacyRealmPresences(view.copy, view.revision, view.entries, people, nowMs);
    return [bytes, presenceAnswerTail(nowMs, Math.max(lastUpdateId, fetch.last_update_id ?? -1))];
  }
  const stored: RealmPresence = { realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] };
  const listing = await legacyPresenceListing(stored, fetch, people, nowMs);
  return [legacyPresencesParts(listing), presenceAnswerTail(nowMs, listing.lastUpdateId)];
}

/**
 * The gateway's share of presence, the most frequent request of a chat server (every open
 * client, every minute). A steady client's ping is written straight into the presence store
 * (one Redis script) and a modern-format fetch read straight from it, without the bus hop to
 * the users service, which owns presence and does everything else: loading who may be seen
 * from PostgreSQL, recording a ping that comes online and announcing it, the legacy format
 * (emails). Zulip's timing rules live in the store's script, which both use.
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
  PresenceStore,
  entriesInWindow,
  lastUpdateIdOf,
  modernMemberBytes,
  modernRealmMembers,
  presenceAnswerTail,
  presencesMemberParts,
  wantsModernPresence,
  type PresenceEntry,
  type PresenceFetch,
  type RealmPresence,
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
  const nowMs = o.nowMs ?? Date.now();
  // Bots have no presence (Zulip lists none): their pings change nothing, once they are known to be allowed.
  if (actor.is_bot) {
    await check?.verify();
    return 'stored';
  }
  const expect = check ? { keys: check.keys, values: check.tokens } : undefined;
  const outcome = await store.ping(actor.realm_id, actor.user_id, status === 'active', Math.floor(nowMs / 1000), PRESENCE_TIMING, true, expect, o.coalesced === true);
  if (outcome.kind === 'unexpected') return 'credentials-moved';
  return outcome.kind === 'recorded' || outcome.kind === 'hidden' ? 'stored' : 'for-users-service';
}

/** A view of an enabled realm as the stored shape the shared answer builders take. */
const storedOf = (view: { entries: Iterable<PresenceEntry> }): RealmPresence => ({ realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] });

/**
 * The realm's presence (users.realmPresence's answer) when the fetch wants the modern format
 * and the store can answer alone, from this replica's copy of the realm brought up to date
 * (shared presence/reader.ts), as the reply's members; else undefined. A fetch of everyone in
 * the default window takes `presences` from the copy's serialised blocks (shared
 * presence/modern-blocks.ts), any other from cached per-entry bytes.
 */
export async function modernPresenceFromStore(reader: PresenceReader, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<SuccessMembers | undefined> {
  if (!wantsModernPresence(fetch)) return undefined;
  const view = await reader.read(actor.realm_id);
  if (!view) return undefined;
  if (view.disabled) return ['"presences":{}', presenceAnswerTail(nowMs, -1)];
  if (fetch.history_limit_days === undefined && !(fetch.last_update_id !== undefined && fetch.last_update_id > 0)) {
    const { blocks, lastUpdateId } = modernRealmMembers(view.copy, view.entries, nowMs);
    return [presencesMemberParts(blocks), presenceAnswerTail(nowMs, Math.max(lastUpdateId, fetch.last_update_id ?? -1))];
  }
  const entries = entriesInWindow({ realmDisabled: false, entries: view.entries }, fetch, nowMs) ?? [];
  return [presencesMemberParts(entries.map(modernMemberBytes)), presenceAnswerTail(nowMs, lastUpdateIdOf(entries, fetch))];
}

/**
 * The realm's presence in the legacy format (by email) built from this replica's copies, as
 * the reply's members (`presences` as cached UTF-8 bytes), or undefined when the users service
 * must answer (the realm's visibility is not loaded yet).
 */
export async function legacyPresenceFromStore(p: GatewayPresence, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<SuccessMembers | undefined> {
  const view = await p.reader.read(actor.realm_id);
  if (!view) return undefined;
  if (view.disabled) return ['"presences":{}', presenceAnswerTail(nowMs, -1)];
  const stored = storedOf(view);
  const token = view.peopleToken;
  const load = async (ids: readonly number[]) => {
    const r = await p.bus.request(users.presenceEmails, { actor, user_ids: [...ids] });
    return new Map(Object.entries(r.emails).map(([id, email]) => [Number(id), email]));
  };
  const listing = await legacyPresenceListing(stored, fetch, { copy: p.people, realmId: actor.realm_id, token, load }, nowMs);
  return [legacyPresencesParts(listing), presenceAnswerTail(nowMs, listing.lastUpdateId)];
}

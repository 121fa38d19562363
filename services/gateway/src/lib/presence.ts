/**
 * The gateway's share of presence, the most frequent request of a chat server (every open
 * client, every minute). A steady client's ping is written straight into the presence store
 * (one Redis script) and a modern-format fetch read straight from it, without the bus hop to
 * the users service, which owns presence and does everything else: loading who may be seen
 * from PostgreSQL, recording a ping that comes online and announcing it, the legacy format
 * (emails). Zulip's timing rules live in the store's script, which both use.
 *
 * A deactivated user never gets this far: deactivation replaces the user's credential token
 * before it answers, so the auth plugin re-checks their key with the users service, which
 * refuses it.
 */
import { RawJson } from '@zc/shared/bus';
import { PRESENCE_TIMING, users, type Actor } from '@zc/shared/contracts';
import type { FastifyInstance } from 'fastify';
import {
  PresencePeople,
  PresenceReader,
  legacyPresenceText,
  presencePeopleToken,
  PresenceStore,
  inFetchWindow,
  modernPresence,
  wantsModernPresence,
  type ModernPresence,
  type PresenceAnswer,
  type PresenceFetch,
} from '@zc/shared/presence';

// Keyed by the app's deps, which every route's (encapsulated) Fastify instance shares.
const perApp = new WeakMap<object, GatewayPresence>();

export interface GatewayPresence {
  store: PresenceStore;
  reader: PresenceReader;
  /** Display emails for the legacy format, asked of the users service (shared presence/legacy.ts). */
  people: PresencePeople;
  bus: FastifyInstance['deps']['bus'];
  /** The realm's people token, which guards `people`. */
  peopleToken(realmId: number): Promise<string>;
}

/** The gateway's presence store and its copies of realms' presence and people, one per app (its routes share them). */
export function presenceOf(app: FastifyInstance): GatewayPresence {
  let p = perApp.get(app.deps);
  if (!p) {
    const { redis, config, bus } = app.deps;
    const store = new PresenceStore(redis, config.redisPrefix);
    const people = new PresencePeople();
    p = { store, reader: new PresenceReader(store), people, bus, peopleToken: (realmId) => presencePeopleToken(redis, config.redisPrefix, realmId) };
    perApp.set(app.deps, p);
  }
  return p;
}

/**
 * Stores a ping if nothing but storing is needed; false when the users service must take it
 * (the realm's visibility is not loaded yet, or the user comes online and is announced).
 */
export async function storeSteadyPing(store: PresenceStore, actor: Actor, status: 'active' | 'idle', nowMs = Date.now()): Promise<boolean> {
  // Bots have no presence (Zulip lists none): their pings change nothing.
  if (actor.is_bot) return true;
  const outcome = await store.ping(actor.realm_id, actor.user_id, status === 'active', Math.floor(nowMs / 1000), PRESENCE_TIMING, true);
  return outcome.kind === 'recorded' || outcome.kind === 'hidden';
}

/**
 * The realm's presence (users.realmPresence's answer) when the fetch wants the modern format
 * and the store can answer alone, from this replica's copy of the realm brought up to date
 * (shared presence/reader.ts); else undefined.
 */
export async function modernPresenceFromStore(reader: PresenceReader, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer | undefined> {
  if (!wantsModernPresence(fetch)) return undefined;
  const view = await reader.read(actor.realm_id);
  if (!view) return undefined;
  if (view.disabled) return { presences: {}, server_timestamp: nowMs / 1000, presence_last_update_id: -1 };
  const nowS = Math.floor(nowMs / 1000);
  const window = { lastUpdateId: fetch.last_update_id, historyLimitDays: fetch.history_limit_days };
  const presences: Record<string, ModernPresence> = {};
  let newest = -1;
  for (const e of view.entries) {
    if (!inFetchWindow(e, nowS, window)) continue;
    presences[String(e.userId)] = modernPresence(e);
    if (e.updateId > newest) newest = e.updateId;
  }
  return { presences, server_timestamp: nowMs / 1000, presence_last_update_id: Math.max(newest, fetch.last_update_id ?? -1) };
}

/**
 * The realm's presence in the legacy format (by email) built from this replica's copies, or
 * undefined when the users service must answer (the realm's visibility is not loaded yet).
 */
export async function legacyPresenceFromStore(p: GatewayPresence, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<RawJson | undefined> {
  const [view, token] = await Promise.all([p.reader.read(actor.realm_id), p.peopleToken(actor.realm_id)]);
  if (!view) return undefined;
  const stored = view.disabled ? { realmDisabled: true, lastUpdateId: -1, entries: [] } : { realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] };
  const load = async (ids: readonly number[]) => {
    const r = await p.bus.request(users.presenceEmails, { actor, user_ids: [...ids] });
    return new Map(Object.entries(r.emails).map(([id, email]) => [Number(id), email]));
  };
  return new RawJson(await legacyPresenceText(stored, fetch, { copy: p.people, realmId: actor.realm_id, token, load }, nowMs));
}

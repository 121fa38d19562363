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
import { PRESENCE_TIMING, type Actor } from '@zc/shared/contracts';
import { modernRealmPresence, wantsModernPresence, type PresenceAnswer, type PresenceFetch, type PresenceStore } from '@zc/shared/presence';

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

/** The realm's presence when the fetch wants the modern format and the store can answer alone; else undefined. */
export async function modernPresenceFromStore(store: PresenceStore, actor: Actor, fetch: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer | undefined> {
  if (!wantsModernPresence(fetch)) return undefined;
  const stored = await store.read(actor.realm_id);
  return stored && modernRealmPresence(stored, fetch, nowMs);
}

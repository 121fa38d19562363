/**
 * Who may be seen in presence (the realm's `presence_disabled`, users' `presence_enabled`) is
 * kept beside the presence in Redis as a cache of PostgreSQL, so that a ping needs no query.
 * This fills it when missing and keeps it current when a setting changes; the setting's
 * action calls `presenceVisibilityChanged` after its transaction commits.
 */
import { AppError } from '@zc/shared/errors';
import type { UsersDeps } from '../deps.js';
import { realmSettings } from '@zc/shared/policy';
import { presencePeopleStore } from '../store/presence-people-store.js';
import type { PresenceStore } from '@zc/shared/presence';
import { realmStore } from '../store/realm-store.js';

const LOAD_ATTEMPTS = 5;

export function presenceStoreOf(deps: UsersDeps): PresenceStore {
  if (!deps.presence) throw new AppError('INTERNAL_SERVER_ERROR', 'Internal server error', 500);
  return deps.presence;
}

/** Reads the realm's visibility from PostgreSQL into Redis (unless it changed meanwhile). */
async function loadVisibility(deps: UsersDeps, store: PresenceStore, realmId: number): Promise<void> {
  const gen = await store.visibilityGeneration(realmId);
  const realm = await realmStore.findById(deps.pool, realmId);
  const hidden = await presencePeopleStore.listHiddenIds(deps.pool, realmId);
  await store.loadVisibility(realmId, gen, realm ? realmSettings(realm.settings).presence_disabled : false, hidden);
}

/**
 * Runs `attempt` (a store call answering undefined while the visibility is not loaded),
 * loading the visibility between tries.
 */
export async function withVisibility<T>(deps: UsersDeps, realmId: number, attempt: (store: PresenceStore) => Promise<T | undefined>): Promise<T> {
  const store = presenceStoreOf(deps);
  for (let i = 0; i < LOAD_ATTEMPTS; i++) {
    const r = await attempt(store);
    if (r !== undefined) return r;
    await loadVisibility(deps, store, realmId);
  }
  throw new AppError('SERVICE_UNAVAILABLE', 'Presence is busy, try again', 503);
}

/** A change of who may be seen: a user's `presence_enabled`, or the realm's `presence_disabled`. */
export type VisibilityChange = { user_id: number; presence_enabled: boolean } | { realm_presence_disabled: boolean };

/** Brings the cached visibility up to date after a committed settings change. */
export async function presenceVisibilityChanged(deps: UsersDeps, realmId: number, change: VisibilityChange): Promise<void> {
  if (!deps.presence) return;
  if ('user_id' in change) await deps.presence.setHidden(realmId, change.user_id, !change.presence_enabled);
  else await deps.presence.setRealmDisabled(realmId, change.realm_presence_disabled);
}

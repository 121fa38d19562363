/**
 * The users service's copy of realms' display emails for the legacy presence answer (shared
 * presence/legacy.ts: kept per process, good while the realm's people token in Redis holds),
 * and the token's renewal after a committed change of what such copies hold.
 */
import { PresencePeople, renewPresencePeopleToken, presencePeopleToken } from '@zc/shared/presence';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { displayEmail } from '../lib/user-view.js';
import { presencePeopleStore } from '../store/presence-people-store.js';
import { realmStore } from '../store/realm-store.js';
import type { Queryable } from '@zc/shared/db';

/** Display emails of `userIds` (null: not listed by presence: inactive, bots, unknown ids). */
export async function presenceEmails(deps: UsersDeps, q: Queryable, realmId: number, userIds: readonly number[]): Promise<Map<number, string | null>> {
  const out = new Map<number, string | null>();
  const realm = await realmStore.findById(q, realmId);
  const found = realm ? await presencePeopleStore.listByIds(q, realmId, userIds) : [];
  const host = realm ? realmHostOf(deps, realm) : '';
  const byId = new Map(found.map((p) => [p.id, p]));
  for (const id of userIds) {
    const p = byId.get(id);
    out.set(id, realm && p && p.is_active && !p.is_bot ? displayEmail(p, realm, host) : null);
  }
  return out;
}

// One per deps (a process has one; tests may build several).
const perDeps = new WeakMap<UsersDeps, PresencePeople>();

export function presencePeopleOf(deps: UsersDeps): PresencePeople {
  let c = perDeps.get(deps);
  if (!c) perDeps.set(deps, (c = new PresencePeople()));
  return c;
}

/** The realm's people token ('' without Redis). */
export async function peopleTokenOf(deps: UsersDeps, realmId: number): Promise<string> {
  return deps.redis ? presencePeopleToken(deps.redis, deps.config.redisPrefix, realmId) : '';
}

/**
 * After a committed change of a listed user's email or state, or of the realm's settings, and
 * before answering: every process's copy of the realm's people is read again.
 */
export async function presencePeopleChanged(deps: UsersDeps, realmId: number): Promise<void> {
  if (deps.redis) await renewPresencePeopleToken(deps.redis, deps.config.redisPrefix, realmId);
}

/**
 * Presence reads: the realm's (GET /realm/presence, POST /users/me/presence, /register) and one
 * user's (GET /users/{user_id_or_email}/presence). Bots, deactivated users and users hiding
 * their presence are never listed; a realm with presence disabled lists nobody.
 */
import type { Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { legacyPresence, singleUserPresence } from '../lib/presence-view.js';
import { displayEmail } from '../lib/user-view.js';
import { withVisibility } from '../presence/visibility.js';
import { findUserByIdOrEmail, requireRealm } from './users.js';
import { presencePeopleStore } from '../store/presence-people-store.js';
import { entriesInWindow, lastUpdateIdOf, modernRealmPresence, wantsModernPresence, type PresenceAnswer, type PresenceFetch, type RealmPresence } from '@zc/shared/presence';
import { realmStore } from '../store/realm-store.js';
import type { UserRow } from '../store/user-store.js';

export type { PresenceAnswer, PresenceFetch };

/** The realm's visible presence, from this process's copy when it has one (shared presence/reader.ts). */
async function readRealm(deps: UsersDeps, realmId: number): Promise<RealmPresence> {
  const reader = deps.presenceReader;
  if (!reader) return withVisibility(deps, realmId, (s) => s.read(realmId));
  const view = await withVisibility(deps, realmId, () => reader.read(realmId));
  return view.disabled ? { realmDisabled: true, lastUpdateId: -1, entries: [] } : { realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] };
}

/** The realm's presence as the fetch asks for it (see users.realmPresence). */
export async function getRealmPresence(deps: UsersDeps, actor: Actor, f: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer> {
  const stored = await readRealm(deps, actor.realm_id);
  if (wantsModernPresence(f)) return modernRealmPresence(stored, f, nowMs);
  const entries = entriesInWindow(stored, f, nowMs);
  const presences: Record<string, unknown> = {};
  if (entries && entries.length > 0) {
    // The legacy format is keyed by the email everyone may see.
    const realm = await realmStore.findById(deps.pool, actor.realm_id);
    if (!realm) throw badRequest('Invalid realm');
    const host = realmHostOf(deps, realm);
    const people = new Map((await presencePeopleStore.listByIds(deps.pool, realm.id, entries.map((e) => e.userId))).map((p) => [p.id, p]));
    for (const e of entries) {
      const p = people.get(e.userId);
      if (p && p.is_active && !p.is_bot) presences[displayEmail(p, realm, host)] = legacyPresence(e);
    }
  }
  return { presences, server_timestamp: nowMs / 1000, presence_last_update_id: lastUpdateIdOf(entries, f) };
}

const noSuchUser = () => badRequest('No such user');

/** The active user a presence path names: an id, or an email as GET /users/{email} takes it. */
async function findTarget(deps: UsersDeps, actor: Actor, by: { user_id?: number | undefined; email?: string | undefined }): Promise<UserRow> {
  const realm = await requireRealm(deps, actor.realm_id);
  const user = await findUserByIdOrEmail(deps, actor, realm, by);
  if (!user || !user.is_active || user.is_system_bot) throw noSuchUser();
  return user;
}

/** One user's presence in the legacy shape, `aggregated` saying "offline" when it is stale. */
export async function getUserPresence(
  deps: UsersDeps,
  actor: Actor,
  by: { user_id?: number | undefined; email?: string | undefined },
  nowMs = Date.now(),
): Promise<{ presence: Record<string, unknown> }> {
  const user = await findTarget(deps, actor, by);
  if (user.is_bot) throw badRequest('Presence is not supported for bot users.');
  const entry = await withVisibility(deps, actor.realm_id, (s) => s.readOne(actor.realm_id, user.id));
  if (!entry) throw badRequest(`No presence data for ${by.user_id ?? by.email ?? ''}`);
  return { presence: singleUserPresence(entry, Math.floor(nowMs / 1000)) };
}

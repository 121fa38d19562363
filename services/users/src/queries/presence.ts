/**
 * Presence reads: the realm's (GET /realm/presence, POST /users/me/presence, /register) and one
 * user's (GET /users/{user_id_or_email}/presence). Bots, deactivated users and users hiding
 * their presence are never listed; a realm with presence disabled lists nobody.
 */
import type { Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { inFetchWindow, legacyPresence, modernPresence, singleUserPresence } from '../lib/presence-view.js';
import { displayEmail } from '../lib/user-view.js';
import { withVisibility } from '../presence/visibility.js';
import { findUserByIdOrEmail, requireRealm } from './users.js';
import { presencePeopleStore } from '../store/presence-people-store.js';
import type { RealmPresence } from '../store/presence-store.js';
import { realmStore } from '../store/realm-store.js';
import type { UserRow } from '../store/user-store.js';

export interface PresenceFetch {
  slim_presence: boolean;
  last_update_id?: number | undefined;
  history_limit_days?: number | undefined;
}

export type PresenceAnswer = {
  presences: Record<string, unknown>;
  server_timestamp: number;
  presence_last_update_id: number;
};

const readRealm = (deps: UsersDeps, realmId: number): Promise<RealmPresence> => withVisibility(deps, realmId, (s) => s.read(realmId));

/** The realm's presence as the fetch asks for it (see users.realmPresence). */
export async function getRealmPresence(deps: UsersDeps, actor: Actor, f: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer> {
  const stored = await readRealm(deps, actor.realm_id);
  const server_timestamp = nowMs / 1000;
  if (stored.realmDisabled) return { presences: {}, server_timestamp, presence_last_update_id: -1 };
  const nowS = Math.floor(server_timestamp);
  const window = { lastUpdateId: f.last_update_id, historyLimitDays: f.history_limit_days };
  const entries = stored.entries.filter((e) => inFetchWindow(e, nowS, window));
  const presences: Record<string, unknown> = {};
  if (f.slim_presence || f.last_update_id !== undefined) {
    for (const e of entries) presences[String(e.userId)] = modernPresence(e);
  } else if (entries.length > 0) {
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
  const newest = entries.reduce((m, e) => Math.max(m, e.updateId), -1);
  return { presences, server_timestamp, presence_last_update_id: Math.max(newest, f.last_update_id ?? -1) };
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

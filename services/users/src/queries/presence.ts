/**
 * Presence reads: the realm's (GET /realm/presence, POST /users/me/presence, /register) and one
 * user's (GET /users/{user_id_or_email}/presence). Bots, deactivated users and users hiding
 * their presence are never listed; a realm with presence disabled lists nobody.
 */
import type { Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { RawJson } from '@zc/shared/bus';
import type { UsersDeps } from '../deps.js';
import { singleUserPresence } from '../lib/presence-view.js';
import { withVisibility } from '../presence/visibility.js';
import { findUserByIdOrEmail, requireRealm } from './users.js';
import { peopleTokenOf, presenceEmails, presencePeopleOf } from '../presence/people-cache.js';
import { legacyPresenceText, modernRealmPresence, wantsModernPresence, type PresenceAnswer, type PresenceFetch, type RealmPresence } from '@zc/shared/presence';
import type { UserRow } from '../store/user-store.js';

export type { PresenceAnswer, PresenceFetch };

/**
 * The realm's visible presence, from this process's copy when it has one (shared
 * presence/reader.ts), with the realm's people token read along (legacy.ts).
 */
async function readRealm(deps: UsersDeps, realmId: number): Promise<{ stored: RealmPresence; token: string }> {
  const reader = deps.presenceReader;
  if (!reader) {
    const [stored, token] = await Promise.all([withVisibility(deps, realmId, (s) => s.read(realmId)), peopleTokenOf(deps, realmId)]);
    return { stored, token };
  }
  const view = await withVisibility(deps, realmId, () => reader.read(realmId));
  if (view.disabled) return { stored: { realmDisabled: true, lastUpdateId: -1, entries: [] }, token: '' };
  return { stored: { realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] }, token: view.peopleToken };
}

/**
 * The realm's presence as the fetch asks for it (see users.realmPresence). The legacy format
 * (keyed by the email everyone may see) is built as JSON text from cached emails, without
 * PostgreSQL (shared presence/legacy.ts).
 */
export async function getRealmPresenceJson(deps: UsersDeps, actor: Actor, f: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer | RawJson> {
  const { stored, token } = await readRealm(deps, actor.realm_id);
  if (wantsModernPresence(f)) return modernRealmPresence(stored, f, nowMs);
  const load = (ids: readonly number[]) => presenceEmails(deps, deps.pool, actor.realm_id, ids);
  return new RawJson(await legacyPresenceText(stored, f, { copy: presencePeopleOf(deps), realmId: actor.realm_id, token, load }, nowMs));
}

/** getRealmPresenceJson as an object (/register's `presences`, merged into its state). */
export async function getRealmPresence(deps: UsersDeps, actor: Actor, f: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer> {
  const r = await getRealmPresenceJson(deps, actor, f, nowMs);
  return r instanceof RawJson ? (JSON.parse(r.text) as PresenceAnswer) : r;
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

/**
 * Presence reads: the realm's (GET /realm/presence, POST /users/me/presence, /register) and one
 * user's (GET /users/{user_id_or_email}/presence). Bots, deactivated users and users hiding
 * their presence are never listed; a realm with presence disabled lists nobody.
 */
import type { Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { RawJson } from '@zc/shared/bus';
import type { UsersDeps } from '../deps.js';
import { legacyPresence, singleUserPresence } from '../lib/presence-view.js';
import { withVisibility } from '../presence/visibility.js';
import { findUserByIdOrEmail, requireRealm } from './users.js';
import { peopleTokenOf, presencePeopleOf } from '../presence/people-cache.js';
import { entriesInWindow, lastUpdateIdOf, modernRealmPresence, wantsModernPresence, type PresenceAnswer, type PresenceEntry, type PresenceFetch, type RealmPresence } from '@zc/shared/presence';
import type { UserRow } from '../store/user-store.js';

export type { PresenceAnswer, PresenceFetch };

/** The realm's visible presence, from this process's copy when it has one (shared presence/reader.ts). */
async function readRealm(deps: UsersDeps, realmId: number): Promise<RealmPresence> {
  const reader = deps.presenceReader;
  if (!reader) return withVisibility(deps, realmId, (s) => s.read(realmId));
  const view = await withVisibility(deps, realmId, () => reader.read(realmId));
  return view.disabled ? { realmDisabled: true, lastUpdateId: -1, entries: [] } : { realmDisabled: false, lastUpdateId: -1, entries: [...view.entries] };
}

/** The legacy answer's value for an entry, as JSON text, kept while the entry object lives (the reader replaces updated entries). */
const legacyTexts = new WeakMap<PresenceEntry, string>();

function legacyTextOf(e: PresenceEntry): string {
  let t = legacyTexts.get(e);
  if (t === undefined) legacyTexts.set(e, (t = JSON.stringify(legacyPresence(e))));
  return t;
}

/**
 * The realm's presence as the fetch asks for it (see users.realmPresence). The legacy format
 * (keyed by the email everyone may see) is built as JSON text from cached emails and cached
 * per-entry texts, without PostgreSQL (presence/people-cache.ts).
 */
export async function getRealmPresenceJson(deps: UsersDeps, actor: Actor, f: PresenceFetch, nowMs = Date.now()): Promise<PresenceAnswer | RawJson> {
  if (wantsModernPresence(f)) return modernRealmPresence(await readRealm(deps, actor.realm_id), f, nowMs);
  const [stored, token] = await Promise.all([readRealm(deps, actor.realm_id), peopleTokenOf(deps, actor.realm_id)]);
  const entries = entriesInWindow(stored, f, nowMs);
  const members: string[] = [];
  if (entries && entries.length > 0) {
    const emails = await presencePeopleOf(deps).emailsOf(actor.realm_id, token, entries.map((e) => e.userId), nowMs);
    for (const e of entries) {
      const email = emails.get(e.userId);
      if (email) members.push(`${email}:${legacyTextOf(e)}`);
    }
  }
  const tail = JSON.stringify({ server_timestamp: nowMs / 1000, presence_last_update_id: lastUpdateIdOf(entries, f) });
  return new RawJson(`{"presences":{${members.join(',')}},${tail.slice(1)}`);
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

/**
 * The read model of realms and users this service keeps (DESIGN.md: a service reads only
 * its own schema). It is fed by usersEvents; when a request needs a realm or a user the
 * model does not know yet (the events are still on their way), the users service is asked
 * directly and the answer is stored, so a request never fails on a lagging model.
 *
 * A realm row is created only from a whole-realm snapshot (users.realm_snapshot), never
 * from a realm.created event alone: lists of "every user of the realm" (event recipients)
 * are complete once the realm row exists.
 */
import { users, type RealmRecord, type UserRecord } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { principalError } from '../lib/errors.js';
import type { SubscriptionsDeps } from '../deps.js';
import type { RealmPeople } from '../lib/audience.js';
import { isAdminRole, isGuestRole, type RealmPolicies } from '../lib/policy.js';
import { directoryStore, type RealmEntry, type UserEntry } from '../store/directory-store.js';

/** Zulip's defaults, for settings a realm record might lack. */
const DEFAULT_POLICIES: RealmPolicies = {
  create_public_stream_policy: 1,
  create_private_stream_policy: 1,
  create_web_public_stream_policy: 7,
  invite_to_stream_policy: 1,
  waiting_period_threshold: 0,
  enable_spectator_access: false,
};

export interface Realm {
  id: number;
  url: string;
  /** Host of the realm URL, used in stream email addresses. */
  host: string;
  policies: RealmPolicies;
}

export function toRealm(r: RealmEntry): Realm {
  const policies = { ...DEFAULT_POLICIES };
  for (const key of Object.keys(DEFAULT_POLICIES) as Array<keyof RealmPolicies>) {
    if (r.settings[key] !== undefined && r.settings[key] !== null) (policies as Record<string, unknown>)[key] = r.settings[key];
  }
  return { id: r.id, url: r.url, host: new URL(r.url).hostname, policies };
}

/** The realm from the read model, loading the whole realm from the users service the first time. */
export async function ensureRealm(deps: SubscriptionsDeps, realmId: number): Promise<Realm> {
  const known = await directoryStore.findRealm(deps.pool, realmId);
  if (known) return toRealm(known);
  const snap = await deps.bus.request(users.realmSnapshot, { realm_id: realmId });
  await transaction(deps.pool, async (tx) => {
    await directoryStore.upsertUsers(tx, snap.users);
    await directoryStore.upsertRealm(tx, snap.realm);
  });
  return toRealm({ id: snap.realm.realm_id, url: snap.realm.url, settings: snap.realm.settings, deactivated: snap.realm.deactivated });
}

export interface ResolvedUsers {
  found: UserEntry[];
  /** Ids and emails that name no user of the realm. */
  missing: Array<number | string>;
}

function entryOf(u: UserRecord): UserEntry {
  return {
    id: u.user_id,
    realm_id: u.realm_id,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_active: u.is_active,
    is_bot: u.is_bot,
    bot_owner_id: u.bot_owner_id,
    date_joined: new Date(u.date_joined),
  };
}

/** Users keyed by id and by lower-cased display email, the two ways a principal names a user. */
class UserIndex {
  private readonly byKey = new Map<number | string, UserEntry>();
  add(users: readonly UserEntry[]): void {
    for (const u of users) {
      this.byKey.set(u.id, u);
      this.byKey.set(u.email.toLowerCase(), u);
    }
  }
  get(key: number | string): UserEntry | undefined {
    return this.byKey.get(typeof key === 'number' ? key : key.toLowerCase());
  }
}

/** Users of the realm by ids or display emails, asking the users service about any the model lacks. */
export async function resolveUsers(deps: SubscriptionsDeps, q: Queryable, realmId: number, keys: ReadonlyArray<number | string>): Promise<ResolvedUsers> {
  const ids = keys.filter((k): k is number => typeof k === 'number');
  const emails = keys.filter((k): k is string => typeof k === 'string');
  const index = new UserIndex();
  index.add(ids.length ? await directoryStore.listUsersByIds(q, realmId, ids) : []);
  index.add(emails.length ? await directoryStore.listUsersByEmails(q, realmId, emails) : []);
  const unknown = keys.filter((k) => !index.get(k));
  if (unknown.length > 0) {
    const reply = await deps.bus.request(users.resolve, {
      realm_id: realmId,
      user_ids: unknown.filter((k): k is number => typeof k === 'number'),
      emails: unknown.filter((k): k is string => typeof k === 'string'),
    });
    await directoryStore.upsertUsers(deps.pool, reply.users);
    // The users service also matches real emails; the index keeps display emails only (spec §5.6).
    index.add(reply.users.map(entryOf));
  }
  const found = new Map<number, UserEntry>();
  const missing: Array<number | string> = [];
  for (const k of keys) {
    const u = index.get(k);
    if (u) found.set(u.id, u);
    else missing.push(k);
  }
  return { found: [...found.values()], missing };
}

/**
 * The active users that `principals` name (spec 4.6), or Zulip's principal error for the
 * first one that names nobody, or a deactivated user.
 */
export async function activePrincipals(deps: SubscriptionsDeps, realmId: number, principals: ReadonlyArray<number | string>): Promise<UserEntry[]> {
  const { found, missing } = await resolveUsers(deps, deps.pool, realmId, principals);
  const inactive = new Set(found.filter((u) => !u.is_active).map((u) => u.id));
  const index = new UserIndex();
  index.add(found);
  const refused = missing[0] ?? principals.find((k) => inactive.has(index.get(k)?.id as number));
  if (refused !== undefined) throw principalError(refused);
  return found;
}

/** One user the caller knows exists (usually the actor). */
export async function requireUser(deps: SubscriptionsDeps, q: Queryable, realmId: number, userId: number): Promise<UserEntry> {
  const { found } = await resolveUsers(deps, q, realmId, [userId]);
  const user = found[0];
  if (!user) throw badRequest('Invalid user');
  return user;
}

/** Applies a users-service event to the read model. */
export async function applyRealmRecord(deps: SubscriptionsDeps, r: RealmRecord): Promise<void> {
  // Only realms already loaded from a snapshot are kept current (see the module comment).
  await directoryStore.updateRealm(deps.pool, r);
}

export async function applyUserRecord(deps: SubscriptionsDeps, u: UserRecord): Promise<void> {
  // System bots (the notification bot) are nobody's peers: never among "everyone" recipients.
  if (u.is_system_bot) return;
  await directoryStore.upsertUsers(deps.pool, [u]);
}

/** The realm's active users by kind, for event recipients. */
export async function realmPeople(q: Queryable, realmId: number): Promise<RealmPeople> {
  const active = await directoryStore.listActiveRoles(q, realmId);
  return {
    everyone: active.map((u) => u.id),
    members: active.filter((u) => !isGuestRole(u.role)).map((u) => u.id),
    admins: active.filter((u) => isAdminRole(u.role)).map((u) => u.id),
  };
}

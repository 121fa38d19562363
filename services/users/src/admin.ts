/**
 * Operator-side account work for the management CLI (scripts/manage.mjs): lists, and the
 * acting owner for the permission-checked actions the API uses, so the CLI obeys the same
 * rules (the last owner keeps the role, and so on).
 */
import { Role, eventsInbox, usersEvents, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { realmHostOf, type UsersDeps } from './deps.js';
import { revokeCredentialsOf } from './actions/credential-revocation.js';
import { checkEmail, emailInUse } from './actions/users.js';
import { hashPassword } from './lib/credentials.js';
import { EMAIL_VISIBILITY_EVERYONE, avatarUrl, toUserRecord } from './lib/user-view.js';
import { userStore } from './store/user-store.js';
import { realmStore, type RealmRow } from './store/realm-store.js';
import { presencePeopleChanged } from './presence/people-cache.js';

export interface RealmSummary {
  realm_id: number;
  subdomain: string;
  name: string;
  deactivated: boolean;
  date_created: string;
  active_users: number;
}

export async function listRealms(q: Queryable): Promise<RealmSummary[]> {
  const { rows } = await q.query<RealmSummary & { date_created: Date }>(
    `SELECT r.id AS realm_id, r.subdomain, r.name, r.deactivated, r.date_created,
            count(u.id) FILTER (WHERE u.is_active AND NOT u.is_bot)::int AS active_users
       FROM users.realm r LEFT JOIN users.user_profile u ON u.realm_id = r.id
      GROUP BY r.id ORDER BY r.id`,
  );
  return rows.map((r) => ({ ...r, date_created: new Date(r.date_created).toISOString() }));
}

const ROLE_NAMES: Record<number, string> = { 100: 'owner', 200: 'administrator', 300: 'moderator', 400: 'member', 600: 'guest' };

export async function listUsers(q: Queryable, realmId: number) {
  return (await userStore.listByRealm(q, realmId)).map((u) => ({
    user_id: u.id,
    email: u.delivery_email,
    full_name: u.full_name,
    role: ROLE_NAMES[u.role] ?? String(u.role),
    is_active: u.is_active,
    is_bot: u.is_bot,
    date_joined: new Date(u.date_joined).toISOString(),
  }));
}

/** The realm's first active owner, acting for the operator. */
export async function ownerActor(q: Queryable, realm: RealmRow): Promise<Actor> {
  const owner = (await userStore.listByRealm(q, realm.id)).find((u) => u.is_active && !u.is_bot && u.role === Role.OWNER);
  if (!owner) throw badRequest(`realm '${realm.subdomain}' has no active owner`);
  return { realm_id: realm.id, user_id: owner.id, role: owner.role, email: owner.delivery_email, full_name: owner.full_name, is_bot: false };
}

/** Sets a user's password (Zulip's minimum length applies to the CLI as to the API). */
export async function doSetPassword(deps: UsersDeps, realmId: number, userId: number, password: string): Promise<void> {
  if (password.length < 6) throw badRequest('The password is too short (6 characters at least).');
  const user = await userStore.findById(deps.pool, realmId, userId);
  if (!user) throw badRequest('No such user');
  await userStore.setPasswordHash(deps.pool, user.id, await hashPassword(password));
}

/**
 * Changes a user's address (Zulip's do_change_user_delivery_email, without the confirmation
 * mail an operator does not need): the other services' read models hear `userUpdated`; the
 * user and the realm's administrators get realm_user update {delivery_email}; where addresses
 * are public everyone gets {new_email}; a Gravatar avatar (hashed from the address) changes
 * too. Cached credentials are dropped, as the gateway's cached actor carries the address.
 */
export async function doChangeEmail(deps: UsersDeps, realmId: number, userId: number, rawEmail: string): Promise<{ changed: boolean }> {
  const email = checkEmail(rawEmail);
  const changed = await transaction(deps.pool, async (tx) => {
    const user = await userStore.findByIdForUpdate(tx, realmId, userId);
    if (!user) throw badRequest('No such user');
    if (user.delivery_email === email) return false;
    const other = await userStore.findByDeliveryEmail(tx, realmId, email);
    if (other && other.id !== user.id) throw emailInUse();
    const realm = await realmStore.findById(tx, realmId);
    if (!realm) throw badRequest('No such realm');
    await tx.query('UPDATE users.user_profile SET delivery_email = $2 WHERE id = $1', [user.id, email]);
    const updated = { ...user, delivery_email: email };
    await addToOutbox(tx, 'users', usersEvents.userUpdated, toUserRecord(updated, realm, realmHostOf(deps, realm)));
    const active = (await userStore.listByRealm(tx, realmId)).filter((u) => u.is_active);
    const notify = (users: number[], person: Record<string, unknown>) =>
      users.length ? addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realmId, users, event: { type: 'realm_user', op: 'update', person: { user_id: user.id, ...person } } }) : undefined;
    const seesDelivery = active.filter((u) => u.id === user.id || u.role <= Role.ADMINISTRATOR).map((u) => u.id);
    await notify(seesDelivery, { delivery_email: email });
    if (realm.email_address_visibility === EMAIL_VISIBILITY_EVERYONE) await notify(active.map((u) => u.id), { new_email: email });
    if (user.avatar_source === 'G') {
      await notify(active.map((u) => u.id), { avatar_source: 'G', avatar_url: avatarUrl(updated, false, realm), avatar_url_medium: avatarUrl(updated, false, realm), avatar_version: updated.avatar_version });
    }
    return true;
  });
  if (changed) {
    await revokeCredentialsOf(deps, { userIds: [userId] });
    await presencePeopleChanged(deps, realmId);
  }
  return { changed };
}

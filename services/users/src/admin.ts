/**
 * Operator-side account work for the management CLI (scripts/manage.mjs): lists, and the
 * acting owner for the permission-checked actions the API uses, so the CLI obeys the same
 * rules (the last owner keeps the role, and so on).
 */
import { Role, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { Queryable } from '@zc/shared/db';
import type { UsersDeps } from './deps.js';
import { hashPassword } from './lib/credentials.js';
import { userStore } from './store/user-store.js';
import type { RealmRow } from './store/realm-store.js';

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

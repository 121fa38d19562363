/** Read paths of the users service, shaped for the API and filtered by what the viewer may see. */
import { badRequest, notFound } from '@zc/shared/errors';
import { Role, versionFields, type Actor, type RealmRecord, type UserRecord } from '@zc/shared/contracts';
import { realmHostOf, realmUrlOf, type UsersDeps } from '../deps.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { displayEmail, toApiUser, toUserRecord } from '../lib/user-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type PersonRow, type UserRow } from '../store/user-store.js';

export async function requireRealm(deps: UsersDeps, realmId: number): Promise<RealmRow> {
  const realm = await realmStore.findById(deps.pool, realmId);
  if (!realm) throw badRequest('Invalid realm');
  return realm;
}

interface View {
  client_gravatar: boolean;
  include_custom_profile_fields: boolean;
}

async function present(deps: UsersDeps, actor: Actor, realm: RealmRow, rows: PersonRow[], v: View): Promise<Record<string, unknown>[]> {
  const profileValues = v.include_custom_profile_fields ? await userStore.profileValues(deps.pool, rows.map((u) => u.id)) : undefined;
  const realmHost = realmHostOf(deps, realm);
  return rows.map((u) =>
    toApiUser(u, realm, {
      viewerRole: actor.role,
      clientGravatar: v.client_gravatar,
      includeCustomProfileFields: v.include_custom_profile_fields,
      realmHost,
      profileValues,
    }),
  );
}

/** GET /users: every user of the realm, active or not. */
export async function listUsers(deps: UsersDeps, actor: Actor, v: View): Promise<Record<string, unknown>[]> {
  const realm = await requireRealm(deps, actor.realm_id);
  return present(deps, actor, realm, await userStore.listByRealm(deps.pool, realm.id), v);
}

/** GET /users/{user_id} and GET /users/{email}; emails are display emails (spec §5.6). */
/**
 * The user a path names by id or by email: a display email (spec §5.6), which administrators
 * may replace by the real one.
 */
export async function findUserByIdOrEmail(
  deps: UsersDeps,
  actor: Actor,
  realm: RealmRow,
  by: { user_id?: number | undefined; email?: string | undefined },
): Promise<UserRow | undefined> {
  if (by.user_id !== undefined) return userStore.findById(deps.pool, realm.id, by.user_id);
  if (by.email === undefined) return undefined;
  const email = by.email.toLowerCase();
  const fake = /^user(\d+)@/.exec(email);
  const user = fake ? await userStore.findById(deps.pool, realm.id, Number(fake[1])) : await userStore.findByDeliveryEmail(deps.pool, realm.id, email);
  const shown = user ? displayEmail(user, realm, realmHostOf(deps, realm)).toLowerCase() : undefined;
  return user && shown !== email && actor.role > Role.ADMINISTRATOR ? undefined : user;
}

export async function getUser(deps: UsersDeps, actor: Actor, by: { user_id?: number; email?: string }, v: View): Promise<Record<string, unknown>> {
  const realm = await requireRealm(deps, actor.realm_id);
  const user = await findUserByIdOrEmail(deps, actor, realm, by);
  // Zulip's access_user_by_id / access_user_by_email: a JsonableError, so 400 (not 404).
  if (!user) throw badRequest('No such user');
  const [out] = await present(deps, actor, realm, [user], v);
  return out as Record<string, unknown>;
}

/** GET /users/me: the caller's own account, real email included. */
export async function getOwnUser(deps: UsersDeps, actor: Actor): Promise<Record<string, unknown>> {
  const realm = await requireRealm(deps, actor.realm_id);
  const me = await userStore.findById(deps.pool, realm.id, actor.user_id);
  if (!me) throw notFound('No such user');
  const [out] = await present(deps, actor, realm, [me], { client_gravatar: false, include_custom_profile_fields: true });
  return { ...out, delivery_email: me.delivery_email };
}

/** GET /server_settings; realm fields only when the host names a realm that exists. */
export async function getServerSettings(deps: UsersDeps, subdomain: string, clientName: string): Promise<Record<string, unknown>> {
  const methods = {
    password: true,
    dev: false,
    email: true,
    ldap: false,
    remoteuser: false,
    github: false,
    azuread: false,
    gitlab: false,
    apple: false,
    google: false,
    saml: false,
    'openid connect': false,
  };
  const out: Record<string, unknown> = {
    authentication_methods: methods,
    external_authentication_methods: [],
    ...versionFields(),
    push_notifications_enabled: false,
    is_incompatible: clientName === 'ZulipInvalid',
  };
  const realm = await realmStore.findBySubdomain(deps.pool, subdomain);
  if (realm && !realm.deactivated) {
    const url = realmUrlOf(deps, realm);
    Object.assign(out, {
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_url: url,
      realm_uri: url,
      realm_name: realm.name,
      realm_icon: `${url}/static/images/logo/zulip-icon-128x128.png`,
      realm_description: realm.description === '' ? '' : `<p>${escapeHtml(realm.description)}</p>`,
      realm_web_public_access_enabled: false,
    });
  }
  return out;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Users by ids and emails, for services resolving message recipients or principals. */
export async function resolveUsers(
  deps: UsersDeps,
  realmId: number,
  ids: readonly number[],
  emails: readonly string[],
): Promise<{ users: UserRecord[]; missing_ids: number[]; missing_emails: string[] }> {
  const realm = await requireRealm(deps, realmId);
  const host = realmHostOf(deps, realm);
  const byId = ids.length ? await userStore.listByIds(deps.pool, realmId, ids) : [];
  const fakeIds = emails.map((e) => /^user(\d+)@/i.exec(e)).filter((m) => m !== null).map((m) => Number(m[1]));
  const byEmail = emails.length ? await userStore.listByDeliveryEmails(deps.pool, realmId, emails) : [];
  const byFake = fakeIds.length ? await userStore.listByIds(deps.pool, realmId, fakeIds) : [];
  const all = new Map<number, UserRow>();
  for (const u of [...byId, ...byEmail, ...byFake]) all.set(u.id, u);
  const records = [...all.values()].map((u) => toUserRecord(u, realm, host));
  const foundIds = new Set(byId.map((u) => u.id));
  const foundEmails = new Set(records.flatMap((u) => [u.email.toLowerCase(), u.delivery_email.toLowerCase()]));
  return {
    users: records,
    missing_ids: ids.filter((id) => !foundIds.has(id)),
    missing_emails: emails.filter((e) => !foundEmails.has(e.toLowerCase())),
  };
}

/** The realm's record, as its domain events carry it. */
export async function getRealmRecord(deps: UsersDeps, realmId: number): Promise<RealmRecord> {
  const realm = await requireRealm(deps, realmId);
  return toRealmRecord(realm, realmUrlOf(deps, realm));
}

export async function realmSnapshot(deps: UsersDeps, realmId: number): Promise<{ realm: RealmRecord; users: UserRecord[] }> {
  const realm = await requireRealm(deps, realmId);
  const host = realmHostOf(deps, realm);
  const users = await userStore.listByRealm(deps.pool, realmId);
  return { realm: toRealmRecord(realm, realmUrlOf(deps, realm)), users: users.map((u) => toUserRecord(u, realm, host)) };
}

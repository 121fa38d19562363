/** State changes of realms and users; each writes its domain events through the outbox. */
import { AppError, badRequest } from '@zc/shared/errors';
import { Role, eventsInbox, isAdmin, messagesInbox, usersEvents, type Actor } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { SYSTEM_GROUPS, isDirectSystemGroupMember, realmSettings, systemGroupId } from '@zc/shared/policy';
import { realmHostOf, realmUrlOf, type UsersDeps } from '../deps.js';
import { presenceVisibilityChanged } from '../presence/visibility.js';
import { generateApiKey, hashPassword } from '../lib/credentials.js';
import { checkFullName } from '../lib/full-name.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { welcomeMessage } from '../lib/welcome-message.js';
import { EMAIL_VISIBILITY_EVERYONE, toApiUser, toUserRecord } from '../lib/user-view.js';
import { userGroupStore } from '../store/user-group-store.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type PersonRow, type ProfileValues, type UserRow } from '../store/user-store.js';

export interface NewAccount {
  email: string;
  password: string | null;
  full_name: string;
  role?: number;
  is_bot?: boolean;
  bot_type?: number | null;
  bot_owner_id?: number | null;
  can_create_users?: boolean;
  is_system_bot?: boolean;
}

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$|^[^\s@]+@localhost$/;
const SUBDOMAIN_RE = /^$|^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/;

export const emailInUse = () => new AppError(null, 'Email is already in use.', 400);

/** A well-formed address (trimmed), or Zulip's 'Invalid email' error. */
export function checkEmail(raw: string): string {
  const email = raw.trim();
  if (!EMAIL_RE.test(email) || email.length > 254) throw badRequest(`Invalid email '${raw}'`);
  return email;
}

/** Checks the account fields a client can get wrong; returns them normalised. */
export function checkNewAccount(a: NewAccount): NewAccount {
  const email = checkEmail(a.email);
  // One rule for every name, new or changed (Zulip's check_full_name, bots included).
  return { ...a, email, full_name: checkFullName(a.full_name) };
}

async function insertAccount(deps: UsersDeps, q: Queryable, realm: RealmRow, a: NewAccount): Promise<{ user: UserRow; apiKey: string }> {
  const apiKey = generateApiKey();
  try {
    const user = await userStore.insert(q, {
      realm_id: realm.id,
      delivery_email: a.email,
      full_name: a.full_name,
      role: a.role ?? Role.MEMBER,
      is_bot: a.is_bot ?? false,
      bot_type: a.is_bot ? (a.bot_type ?? 1) : null,
      bot_owner_id: a.is_bot ? (a.bot_owner_id ?? null) : null,
      password_hash: a.password === null ? null : await hashPassword(a.password),
      api_key_hash: deps.vault.lookupHash(apiKey),
      api_key_enc: deps.vault.encrypt(apiKey),
      can_create_users: a.can_create_users ?? false,
      is_system_bot: a.is_system_bot ?? false,
    });
    return { user, apiKey };
  } catch (e) {
    if (isUniqueViolation(e)) throw emailInUse();
    throw e;
  }
}

/**
 * Announces a new user: the read-model event, and realm_user add to everyone in the realm.
 */
async function announceUser(deps: UsersDeps, q: Queryable, realm: RealmRow, user: UserRow): Promise<void> {
  await addToOutbox(q, 'users', usersEvents.userCreated, toUserRecord(user, realm, realmHostOf(deps, realm)));
  await notifyRealmUserAdd(deps, q, realm, user, new Map());
  await notifySystemGroupsJoined(q, realm, user);
}

/**
 * A new user joins their role's system groups (and role:fullmembers at once when the realm has
 * no waiting period), as Zulip's do_create_user announces: clients keep realm_user_groups from
 * these events. Counted with role:fullmembers' clock (actions/full-members.ts); a member who
 * must wait is announced by the sweep when the waiting period has passed. Not for a
 * reactivation: a deactivated user keeps their memberships.
 */
async function notifySystemGroupsJoined(q: Queryable, realm: RealmRow, user: UserRow): Promise<void> {
  if (user.is_system_bot) return;
  const waitingDays = realmSettings(realm.settings).waiting_period_threshold;
  const joined = SYSTEM_GROUPS.filter(({ name }) => isDirectSystemGroupMember(name, user, waitingDays, realm.full_members_swept_at));
  if (joined.length === 0) return;
  const everyone = await userStore.listActiveIds(q, realm.id);
  for (const { name } of joined) {
    await addToOutbox(q, 'users', eventsInbox.notify, {
      realm_id: realm.id,
      users: everyone,
      event: { type: 'user_group', op: 'add_members', group_id: systemGroupId(realm.id, name), user_ids: [user.id] },
    });
  }
}

/**
 * realm_user add for a user who joined or came back, to every active member of the realm.
 * Administrators may see the real address where the realm hides it, so they get their own
 * copy of the event with `delivery_email`.
 */
export async function notifyRealmUserAdd(deps: UsersDeps, q: Queryable, realm: RealmRow, user: PersonRow, profileValues: ProfileValues): Promise<void> {
  const host = realmHostOf(deps, realm);
  const everyone = (await userStore.listByRealm(q, realm.id)).filter((u) => u.is_active);
  const audiences = realm.email_address_visibility === EMAIL_VISIBILITY_EVERYONE
    ? [{ role: Role.MEMBER, users: everyone }]
    : [
        { role: Role.ADMINISTRATOR, users: everyone.filter((u) => u.role <= Role.ADMINISTRATOR) },
        { role: Role.MEMBER, users: everyone.filter((u) => u.role > Role.ADMINISTRATOR) },
      ];
  for (const audience of audiences) {
    if (audience.users.length === 0) continue;
    const person = toApiUser(user, realm, { viewerRole: audience.role, clientGravatar: false, includeCustomProfileFields: true, realmHost: host, profileValues });
    await addToOutbox(q, 'users', eventsInbox.notify, {
      realm_id: realm.id,
      users: audience.users.map((u) => u.id),
      event: { type: 'realm_user', op: 'add', person },
      // client_gravatar queues compute the URL themselves, as /register gives them null.
      ...(realm.email_address_visibility === EMAIL_VISIBILITY_EVERYONE && user.avatar_source === 'G' ? { gravatar_fields: ['person.avatar_url'] } : {}),
    });
  }
}

/** The address of a realm's notification bot, the sender of automated messages. */
export function notificationBotEmail(deps: UsersDeps, realm: Pick<RealmRow, 'subdomain'>): string {
  return `notification-bot@${realmHostOf(deps, realm)}`;
}

/** The address of a realm's Welcome Bot, who greets each new human user. */
export function welcomeBotEmail(deps: UsersDeps, realm: Pick<RealmRow, 'subdomain'>): string {
  return `welcome-bot@${realmHostOf(deps, realm)}`;
}

/** A bot of the server's own (no owner, no password), listed to clients in cross_realm_bots. */
async function createSystemBot(deps: UsersDeps, q: Queryable, realm: RealmRow, email: string, fullName: string): Promise<UserRow> {
  const { user } = await insertAccount(deps, q, realm, { email, password: null, full_name: fullName, is_bot: true, bot_type: 1, is_system_bot: true });
  // Other services learn of it through their read models.
  await addToOutbox(q, 'users', usersEvents.userCreated, toUserRecord(user, realm, realmHostOf(deps, realm)));
  return user;
}

/**
 * The realm's Welcome Bot, made on first need in a realm created before it existed. Its own
 * transaction, ahead of the new user's: two sign-ups at once may both try, and the one that
 * loses finds the other's.
 */
async function ensureWelcomeBot(deps: UsersDeps, realm: RealmRow): Promise<UserRow> {
  const email = welcomeBotEmail(deps, realm);
  const found = await userStore.findByDeliveryEmail(deps.pool, realm.id, email);
  if (found) return found;
  try {
    return await transaction(deps.pool, (tx) => createSystemBot(deps, tx, realm, email, 'Welcome Bot'));
  } catch (e) {
    const raced = e instanceof AppError ? await userStore.findByDeliveryEmail(deps.pool, realm.id, email) : undefined;
    if (raced) return raced;
    throw e;
  }
}

/**
 * Welcome Bot's direct message to a new human user, sent by the messages service from the
 * outbox, so it goes out once the user exists (Zulip's initial direct message at sign-up).
 */
async function welcome(deps: UsersDeps, q: Queryable, realm: RealmRow, user: UserRow, bot: UserRow | null): Promise<void> {
  if (!bot || user.is_bot) return;
  await addToOutbox(q, 'users', messagesInbox.systemBotMessage, {
    realm_id: realm.id,
    key: `welcome:${user.id}`,
    sender_id: bot.id,
    recipient_id: user.id,
    content: welcomeMessage(realm.name),
  });
}

export interface CreatedRealm {
  realm: RealmRow;
  owner: UserRow;
  apiKey: string;
  realmUrl: string;
}

/** Creates a realm with its owner (management CLI and the development realm). */
export async function doCreateRealm(
  deps: UsersDeps,
  r: { name: string; subdomain: string; owner: NewAccount },
): Promise<CreatedRealm> {
  const subdomain = r.subdomain.trim().toLowerCase();
  if (!SUBDOMAIN_RE.test(subdomain)) throw badRequest(`Invalid subdomain '${r.subdomain}'`);
  if (r.name.trim() === '') throw badRequest('Realm name must not be empty');
  const owner = checkNewAccount({ ...r.owner, role: Role.OWNER });
  return transaction(deps.pool, async (tx) => {
    if (await realmStore.findBySubdomain(tx, subdomain)) throw badRequest(`Subdomain '${subdomain}' is already in use`);
    const realm = await realmStore.insert(tx, { subdomain, name: r.name.trim() });
    await userGroupStore.ensureSystemGroups(tx, realm.id);
    await addToOutbox(tx, 'users', usersEvents.realmCreated, toRealmRecord(realm, realmUrlOf(deps, realm)));
    const { user, apiKey } = await insertAccount(deps, tx, realm, owner);
    await announceUser(deps, tx, realm, user);
    await createSystemBot(deps, tx, realm, notificationBotEmail(deps, realm), 'Notification Bot');
    if (deps.config.welcomeMessages) {
      await welcome(deps, tx, realm, user, await createSystemBot(deps, tx, realm, welcomeBotEmail(deps, realm), 'Welcome Bot'));
    }
    return { realm, owner: user, apiKey, realmUrl: realmUrlOf(deps, realm) };
  });
}

/** Creates an account in a realm without permission checks (management CLI). */
export async function doCreateUser(deps: UsersDeps, realm: RealmRow, a: NewAccount): Promise<{ user: UserRow; apiKey: string }> {
  const account = checkNewAccount(a);
  const bot = deps.config.welcomeMessages && !account.is_bot ? await ensureWelcomeBot(deps, realm) : null;
  const created = await transaction(deps.pool, async (tx) => {
    const made = await insertAccount(deps, tx, realm, account);
    await announceUser(deps, tx, realm, made.user);
    await welcome(deps, tx, realm, made.user, bot);
    return made;
  });
  // The realm's defaults may hide a new user's presence; the presence store's copy of who is
  // hidden was loaded before they existed.
  if (created.user.settings.presence_enabled === false) {
    await presenceVisibilityChanged(deps, realm.id, { user_id: created.user.id, presence_enabled: false });
  }
  return created;
}

/** POST /users: only administrators holding can_create_users may create accounts. */
export async function checkCreateUser(deps: UsersDeps, actor: Actor, a: { email: string; password: string; full_name: string }): Promise<number> {
  const me = await userStore.findById(deps.pool, actor.realm_id, actor.user_id);
  if (!me || !isAdmin(me) || !me.can_create_users) throw badRequest('User not authorized to create users');
  const realm = await realmStore.findById(deps.pool, actor.realm_id);
  if (!realm) throw badRequest('Invalid realm');
  const { user } = await doCreateUser(deps, realm, { ...a, role: Role.MEMBER });
  return user.id;
}

/** Grants a permission to a user (management CLI). */
export async function doGrant(deps: UsersDeps, realm: RealmRow, email: string, permission: string): Promise<UserRow> {
  if (permission !== 'can_create_users') throw badRequest(`Unknown permission '${permission}'`);
  const user = await userStore.findByDeliveryEmail(deps.pool, realm.id, email);
  if (!user) throw badRequest(`No such user '${email}'`);
  await userStore.setCanCreateUsers(deps.pool, user.id, true);
  return { ...user, can_create_users: true };
}

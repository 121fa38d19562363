/**
 * What administrators change about people (Zulip's update_user_backend and
 * reactivate_user_backend): name, role, custom profile data, reactivation. Each change is
 * one transaction that also announces it: `userUpdated` for the other services' read models
 * (permissions, and the gateway drops its cached credentials of the user at once) and the
 * client events Zulip sends for it.
 */
import { Role, eventsInbox, isAdmin, isGuest, usersEvents, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { SYSTEM_GROUPS, isDirectSystemGroupMember, realmSettings, systemGroupId } from '@zc/shared/policy';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { mustBeAdmin, mustBeOwner, noSuchUser } from '../lib/errors.js';
import { checkFullName } from '../lib/full-name.js';
import { toApiBot, toUserRecord } from '../lib/user-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type UserRow } from '../store/user-store.js';
import { dropEventQueuesOf, revokeCredentialsOf } from './credential-revocation.js';
import { notifyRealmUserAdd } from './users.js';
import { applyProfileData, checkProfileData, type ProfileDataEntry } from './profile-data.js';
import { presencePeopleChanged } from '../presence/people-cache.js';

export const ROLES: readonly number[] = [Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR, Role.MEMBER, Role.GUEST];

/**
 * Who administers a bot and so receives its realm_bot events: its owner and the realm's
 * active human administrators (Zulip's bot_owner_user_ids).
 */
export async function botAdministrators(q: Queryable, realmId: number, bot: Pick<UserRow, 'bot_owner_id'>): Promise<number[]> {
  const ids = new Set((await userStore.listByRealm(q, realmId)).filter((u) => u.is_active && !u.is_bot && isAdmin(u)).map((u) => u.id));
  if (bot.bot_owner_id !== null) {
    const owner = await userStore.findById(q, realmId, bot.bot_owner_id);
    if (owner?.is_active) ids.add(owner.id);
  }
  return [...ids];
}

/**
 * System groups' members follow roles, so a role change moves the user between them; clients
 * keep `realm_user_groups` in step from these events (Zulip: removed from the old role's
 * group, then added to the new one's).
 */
async function notifySystemGroupMoves(q: Queryable, realm: RealmRow, before: UserRow, after: UserRow): Promise<void> {
  const waitingDays = realmSettings(realm.settings).waiting_period_threshold;
  const membership = SYSTEM_GROUPS.map(({ name }) => ({
    name,
    // role:fullmembers counted with its announced clock (actions/full-members.ts).
    was: isDirectSystemGroupMember(name, before, waitingDays, realm.full_members_swept_at),
    is: isDirectSystemGroupMember(name, after, waitingDays, realm.full_members_swept_at),
  }));
  const moves = [
    ...membership.filter((g) => g.was && !g.is).map((g) => ({ op: 'remove_members', name: g.name })),
    ...membership.filter((g) => !g.was && g.is).map((g) => ({ op: 'add_members', name: g.name })),
  ];
  for (const m of moves) {
    await notifyEveryone(q, realm.id, { type: 'user_group', op: m.op, group_id: systemGroupId(realm.id, m.name), user_ids: [after.id] });
  }
}

/**
 * Zulip's do_change_full_name, the one place a name changes (PATCH /settings for oneself,
 * PATCH /users/{id} by an administrator): the row, the read models' `userUpdated`, realm_user
 * update to everyone and, for a bot, realm_bot update to those who administer it. The name is
 * checked by the caller (checkFullName) and differs from the current one.
 */
export async function doChangeFullName(deps: UsersDeps, q: Queryable, realm: RealmRow, user: UserRow, fullName: string): Promise<UserRow> {
  await userStore.setFullName(q, user.id, fullName);
  const updated = { ...user, full_name: fullName };
  await addToOutbox(q, 'users', usersEvents.userUpdated, toUserRecord(updated, realm, realmHostOf(deps, realm)));
  await notifyEveryone(q, realm.id, { type: 'realm_user', op: 'update', person: { user_id: user.id, full_name: fullName } });
  if (user.is_bot) {
    await addToOutbox(q, 'users', eventsInbox.notify, {
      realm_id: realm.id,
      users: await botAdministrators(q, realm.id, user),
      event: { type: 'realm_bot', op: 'update', bot: { user_id: user.id, full_name: fullName } },
    });
  }
  return updated;
}

async function notifyEveryone(q: Queryable, realmId: number, event: Record<string, unknown>): Promise<void> {
  await addToOutbox(q, 'users', eventsInbox.notify, { realm_id: realmId, users: await userStore.listActiveIds(q, realmId), event });
}

/** Any user of the actor's realm, active or not, bots included; system bots are not people to administer. */
async function accessUserForAdmin(q: Queryable, actor: Actor, userId: number): Promise<UserRow> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const target = await userStore.findById(q, actor.realm_id, userId);
  if (!target || target.is_system_bot) throw noSuchUser();
  return target;
}

async function requireRealm(q: Queryable, realmId: number): Promise<RealmRow> {
  const realm = await realmStore.findById(q, realmId);
  if (!realm) throw badRequest('Invalid realm');
  return realm;
}

export interface UserChanges {
  full_name?: string;
  role?: number;
  profile_data?: ProfileDataEntry[];
}

/**
 * PATCH /users/{user_id}, administrators only. Only owners give or take the owner role, and
 * the realm's last owner keeps it. A blank or unchanged name is ignored, as Zulip does.
 * Everything is checked before anything is written.
 */
export async function checkUpdateUser(deps: UsersDeps, actor: Actor, userId: number, changes: UserChanges): Promise<void> {
  let demotedToGuest = false;
  const changedActor = await transaction(deps.pool, async (tx) => {
    const target = await accessUserForAdmin(tx, actor, userId);
    const realm = await requireRealm(tx, actor.realm_id);
    const role = changes.role !== undefined && changes.role !== target.role ? changes.role : undefined;
    if (role !== undefined) {
      if ((role === Role.OWNER || target.role === Role.OWNER) && actor.role !== Role.OWNER) throw mustBeOwner();
      if (target.role === Role.OWNER) {
        const owners = await userStore.lockActiveOwners(tx, realm.id);
        if (target.is_active && owners.length <= 1) throw badRequest('The owner permission cannot be removed from the only organization owner.');
      }
    }
    const name = changes.full_name !== undefined && changes.full_name.trim() !== '' && changes.full_name !== target.full_name
      ? checkFullName(changes.full_name)
      : undefined;
    const profile = changes.profile_data ? await checkProfileData(tx, realm.id, changes.profile_data, { allowRemoval: true }) : undefined;

    let updated = target;
    if (role !== undefined) {
      await userStore.setRole(tx, target.id, role);
      demotedToGuest = isGuest({ role }) && !isGuest(target);
      updated = { ...updated, role };
      await addToOutbox(tx, 'users', usersEvents.userUpdated, toUserRecord(updated, realm, realmHostOf(deps, realm)));
      await notifyEveryone(tx, realm.id, { type: 'realm_user', op: 'update', person: { user_id: target.id, role } });
      await notifySystemGroupMoves(tx, realm, target, updated);
    }
    // The name trimmed may be the one the user has.
    if (name !== undefined && name !== target.full_name) updated = await doChangeFullName(deps, tx, realm, updated, name);
    if (profile) await applyProfileData(deps, tx, realm, target, profile);
    return updated !== target;
  });
  // The gateway's cached actor carries the role and name: every replica re-checks it before we answer.
  if (changedActor) await revokeCredentialsOf(deps, { userIds: [userId] });
  // A guest reads only their streams: queues fed every public stream's events must go.
  if (demotedToGuest) await dropEventQueuesOf(deps, actor.realm_id, userId, 'all_public_streams');
}

/**
 * POST /users/{user_id}/reactivate, administrators only. A bot whose owner has left gets the
 * reactivating administrator as its owner (Zulip's do_reactivate_user).
 */
export async function checkReactivateUser(deps: UsersDeps, actor: Actor, userId: number): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const target = await accessUserForAdmin(tx, actor, userId);
    if (target.is_active) throw badRequest('User is already active.');
    const realm = await requireRealm(tx, actor.realm_id);
    await userStore.setActive(tx, target.id, true);
    let user: UserRow = { ...target, is_active: true };
    if (user.is_bot && user.bot_owner_id !== null) {
      const owner = await userStore.findById(tx, realm.id, user.bot_owner_id);
      if (!owner?.is_active) {
        await userStore.setBotOwner(tx, user.id, actor.user_id);
        user = { ...user, bot_owner_id: actor.user_id };
      }
    }
    await addToOutbox(tx, 'users', usersEvents.userUpdated, toUserRecord(user, realm, realmHostOf(deps, realm)));
    // Feature level 155: a returning user is announced as realm_user add (update {is_active} came at 222).
    await notifyRealmUserAdd(deps, tx, realm, user, await userStore.profileValues(tx, [user.id]));
    if (user.is_bot) {
      await addToOutbox(tx, 'users', eventsInbox.notify, {
        realm_id: realm.id,
        users: await botAdministrators(tx, realm.id, user),
        event: { type: 'realm_bot', op: 'add', bot: toApiBot(user, realm, realmHostOf(deps, realm), deps.vault.decrypt(user.api_key_enc)) },
      });
    }
  });
  // Presence lists them again under their email.
  await presencePeopleChanged(deps, actor.realm_id);
}

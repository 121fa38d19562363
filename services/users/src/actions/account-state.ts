/**
 * Account changes that take credentials away: deactivating a user and replacing an API key.
 * Each gives the user a new credential token once committed and before answering
 * (credential-revocation.ts), so the old key is refused by every gateway replica as soon as
 * the call answers; the outbox event then drops the cached entries to free memory.
 */
import { Role, eventsInbox, isAdmin, usersEvents, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { generateApiKey } from '../lib/credentials.js';
import { mustBeAdmin, mustBeOwner } from '../lib/errors.js';
import { toUserRecord } from '../lib/user-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type UserRow } from '../store/user-store.js';
import { botAdministrators } from './people-admin.js';
import { dropEventQueuesOf, revokeCredentialsOf } from './credential-revocation.js';
import { presencePeopleChanged } from '../presence/people-cache.js';

const noSuchUser = () => badRequest('No such user');

/** One account made inactive and announced, inside the caller's transaction. */
async function deactivateInTx(deps: UsersDeps, tx: Queryable, realm: RealmRow, user: UserRow): Promise<void> {
  await userStore.setActive(tx, user.id, false);
  const updated = { ...user, is_active: false };
  await addToOutbox(tx, 'users', usersEvents.userUpdated, toUserRecord(updated, realm, realmHostOf(deps, realm)));
  // At the feature level we claim (155) clients learn of a deactivation through realm_user
  // remove; Zulip replaced it with update {is_active: false} only at feature level 222.
  await addToOutbox(tx, 'users', eventsInbox.notify, {
    realm_id: realm.id,
    users: await userStore.listActiveIds(tx, realm.id),
    event: { type: 'realm_user', op: 'remove', person: { user_id: user.id, full_name: user.full_name } },
  });
  if (user.is_bot) {
    await addToOutbox(tx, 'users', eventsInbox.notify, {
      realm_id: realm.id,
      users: await botAdministrators(tx, realm.id, user),
      event: { type: 'realm_bot', op: 'remove', bot: { user_id: user.id, full_name: user.full_name } },
    });
  }
}

/**
 * Deactivates a user of `realmId` (permission checks are the caller's) and, as Zulip's
 * do_deactivate_user does, the active bots the user owns: a bot must not go on acting for
 * someone who has left. Returns false when the user was already inactive, in which case
 * nothing is written or announced.
 */
export async function doDeactivateUser(deps: UsersDeps, realmId: number, userId: number): Promise<boolean> {
  const deactivated = await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findById(tx, realmId);
    const user = await userStore.findByIdForUpdate(tx, realmId, userId);
    if (!realm || !user) throw noSuchUser();
    if (!user.is_active) return undefined;
    await deactivateInTx(deps, tx, realm, user);
    // The owner first, so the bots' realm_bot remove goes to the administrators only.
    const bots = user.is_bot ? [] : (await userStore.listBots(tx, realm.id, user.id)).filter((b) => b.is_active);
    for (const bot of bots) await deactivateInTx(deps, tx, realm, bot);
    return [user.id, ...bots.map((b) => b.id)];
  });
  if (!deactivated) return false;
  await revokeCredentialsOf(deps, { userIds: deactivated });
  await presencePeopleChanged(deps, realmId);
  for (const id of deactivated) await dropEventQueuesOf(deps, realmId, id, 'all');
  // Zulip lists only active users' presence; the presence store keeps no user list of its own.
  for (const id of deactivated) await deps.presence?.forgetUser(realmId, id);
  return true;
}

/** Gives a user a new API key and returns it; the old key stops working at once. */
export async function doRegenerateApiKey(deps: UsersDeps, realmId: number, userId: number): Promise<string> {
  const apiKey = generateApiKey();
  await transaction(deps.pool, async (tx) => {
    const user = await userStore.findById(tx, realmId, userId);
    if (!user) throw noSuchUser();
    await userStore.setApiKey(tx, user.id, deps.vault.lookupHash(apiKey), deps.vault.encrypt(apiKey));
    await addToOutbox(tx, 'users', usersEvents.apiKeyChanged, { realm_id: realmId, user_id: user.id });
  });
  await revokeCredentialsOf(deps, { userIds: [userId] });
  return apiKey;
}

/**
 * DELETE /users/{user_id} (administrators) and DELETE /users/me: owners may be deactivated only
 * by owners, and the last active owner never.
 */
export async function checkDeactivateUser(deps: UsersDeps, actor: Actor, userId: number): Promise<void> {
  // Zulip's require_realm_admin comes first: a lesser role learns nothing about the id.
  if (userId !== actor.user_id && !isAdmin(actor)) throw mustBeAdmin();
  const target = await userStore.findById(deps.pool, actor.realm_id, userId);
  if (!target || target.is_system_bot) throw noSuchUser();
  if (userId !== actor.user_id && target.role === Role.OWNER && actor.role !== Role.OWNER) throw mustBeOwner();
  if (target.role === Role.OWNER) {
    const owners = (await userStore.listByRealm(deps.pool, actor.realm_id)).filter((u) => u.is_active && u.role === Role.OWNER);
    if (owners.length <= 1) throw badRequest('Cannot deactivate the only organization owner');
  }
  await doDeactivateUser(deps, actor.realm_id, userId);
}

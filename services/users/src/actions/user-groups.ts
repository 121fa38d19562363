/**
 * Changes of user groups (spec 4.19, Zulip's user_groups views at feature level 155): who
 * may change what, the write, the `user_group` client event to everyone in the realm and
 * the whole group for other services' copies of the directory, in one transaction.
 */
import { eventsInbox, isAdmin, isModerator, userGroupEvents, type Actor } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { groupAndSubgroups, hasPolicyPermission, realmSettings, type GroupShape } from '@zc/shared/policy';
import type { UsersDeps } from '../deps.js';
import { checkAddOrDelete, checkUserGroupName, insufficientPermission, invalidUserGroup, toApiUserGroup, toUserGroupRecord } from '../lib/user-group-rules.js';
import { groupPeople } from '../queries/user-groups.js';
import { realmStore } from '../store/realm-store.js';
import { userGroupStore, type UserGroupRow } from '../store/user-group-store.js';
import { userStore } from '../store/user-store.js';

const alreadyExists = (name: string) => badRequest(`User group '${name}' already exists.`);

/** Zulip's can_edit_user_groups: the realm's user_group_edit_policy. */
async function checkMayEditGroups(q: Queryable, actor: Actor): Promise<void> {
  // One after the other: `q` may be one client (a transaction, a snapshot read), which runs one query at a time.
  const realm = await realmStore.findById(q, actor.realm_id);
  const me = await userStore.findById(q, actor.realm_id, actor.user_id);
  if (!realm || !me) throw insufficientPermission();
  const s = realmSettings(realm.settings);
  if (!hasPolicyPermission(me, s.user_group_edit_policy, s.waiting_period_threshold)) throw insufficientPermission();
}

/** Zulip's access_user_group_by_id for a change: not a system group; administrators, moderators and the group's members. */
async function accessGroupForChange(tx: Queryable, actor: Actor, groupId: number): Promise<UserGroupRow> {
  const group = await userGroupStore.find(tx, actor.realm_id, groupId, { forUpdate: true });
  if (!group) throw invalidUserGroup();
  if (group.is_system_group) throw insufficientPermission();
  if (!isAdmin(actor) && !isModerator(actor) && !group.members.includes(actor.user_id)) throw insufficientPermission();
  return group;
}

/** The users named, all active users of the realm, or Zulip's error for the first that is not. */
async function checkUserIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<number[]> {
  const found = new Map((await userStore.listByIds(q, realmId, ids)).map((u) => [u.id, u]));
  for (const id of ids) {
    const u = found.get(id);
    if (!u || !u.is_active || u.is_system_bot) throw badRequest(`Invalid user ID: ${id}`);
  }
  return [...new Set(ids)];
}

/** Groups of the realm that may become subgroups (Zulip's access_user_groups_as_potential_subgroups). */
async function checkSubgroupIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<Map<number, UserGroupRow>> {
  const groups = new Map((await userGroupStore.listForRealm(q, realmId)).map((g) => [g.id, g]));
  for (const id of ids) if (!groups.has(id)) throw badRequest(`Invalid user group ID: ${id}`);
  return groups;
}

/** The client event to every user of the realm, and the whole group for the directory copies. */
async function announce(tx: Queryable, realmId: number, event: Record<string, unknown>, changed: readonly { row: UserGroupRow; deleted?: boolean }[]): Promise<void> {
  const everyone = (await userStore.listByRealm(tx, realmId)).filter((u) => u.is_active).map((u) => u.id);
  if (everyone.length > 0) await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realmId, users: everyone, event });
  for (const c of changed) await addToOutbox(tx, 'users', userGroupEvents.changed, toUserGroupRecord(c.row, c.deleted === true));
}

async function reload(tx: Queryable, realmId: number, groupId: number): Promise<UserGroupRow> {
  return (await userGroupStore.find(tx, realmId, groupId)) as UserGroupRow;
}

export async function checkCreateUserGroup(
  deps: UsersDeps,
  actor: Actor,
  r: { name: string; description: string; members: readonly number[]; subgroups: readonly number[] },
): Promise<number> {
  await checkMayEditGroups(deps.pool, actor);
  const name = checkUserGroupName(r.name);
  try {
    return await transaction(deps.pool, async (tx) => {
      const members = await checkUserIds(tx, actor.realm_id, r.members);
      if (r.subgroups.length > 0) await checkSubgroupIds(tx, actor.realm_id, r.subgroups);
      if (await userGroupStore.findByName(tx, actor.realm_id, name)) throw alreadyExists(name);
      const id = await userGroupStore.insert(tx, { realm_id: actor.realm_id, name, description: r.description, creator_id: actor.user_id });
      await userGroupStore.addMembers(tx, id, members);
      await userGroupStore.addSubgroups(tx, id, [...new Set(r.subgroups)]);
      const row = await reload(tx, actor.realm_id, id);
      const group = toApiUserGroup(row, await groupPeople(tx, actor.realm_id));
      await announce(tx, actor.realm_id, { type: 'user_group', op: 'add', group }, [{ row }]);
      return id;
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw alreadyExists(name);
    throw e;
  }
}

export async function checkUpdateUserGroup(deps: UsersDeps, actor: Actor, groupId: number, r: { name?: string; description?: string }): Promise<void> {
  await checkMayEditGroups(deps.pool, actor);
  if (r.name === undefined && r.description === undefined) throw badRequest('No new data supplied');
  const name = r.name === undefined ? undefined : checkUserGroupName(r.name);
  try {
    await transaction(deps.pool, async (tx) => {
      const group = await accessGroupForChange(tx, actor, groupId);
      const events: Array<Record<string, unknown>> = [];
      if (name !== undefined && name !== group.name) {
        const other = await userGroupStore.findByName(tx, actor.realm_id, name);
        if (other && other.id !== group.id) throw alreadyExists(name);
        await userGroupStore.rename(tx, group.id, name);
        events.push({ type: 'user_group', op: 'update', group_id: group.id, data: { name } });
      }
      if (r.description !== undefined && r.description !== group.description) {
        await userGroupStore.setDescription(tx, group.id, r.description);
        events.push({ type: 'user_group', op: 'update', group_id: group.id, data: { description: r.description } });
      }
      const row = await reload(tx, actor.realm_id, group.id);
      for (const [i, e] of events.entries()) await announce(tx, actor.realm_id, e, i === 0 ? [{ row }] : []);
    });
  } catch (e) {
    if (isUniqueViolation(e) && name !== undefined) throw alreadyExists(name);
    throw e;
  }
}

export async function checkRemoveUserGroup(deps: UsersDeps, actor: Actor, groupId: number): Promise<void> {
  await checkMayEditGroups(deps.pool, actor);
  await transaction(deps.pool, async (tx) => {
    const group = await accessGroupForChange(tx, actor, groupId);
    const supergroups = await userGroupStore.supergroupIds(tx, group.id);
    await userGroupStore.delete(tx, group.id);
    const changed = [{ row: group, deleted: true }];
    for (const id of supergroups) changed.push({ row: await reload(tx, actor.realm_id, id), deleted: false });
    await announce(tx, actor.realm_id, { type: 'user_group', op: 'remove', group_id: group.id }, changed);
  });
}

export async function checkUpdateUserGroupMembers(deps: UsersDeps, actor: Actor, groupId: number, add: readonly number[], del: readonly number[]): Promise<void> {
  await checkMayEditGroups(deps.pool, actor);
  checkAddOrDelete(add, del);
  await transaction(deps.pool, async (tx) => {
    const group = await accessGroupForChange(tx, actor, groupId);
    const current = new Set(group.members);
    const adding = await checkUserIds(tx, actor.realm_id, add);
    for (const id of adding) if (current.has(id)) throw badRequest(`User ${id} is already a member of this group`);
    const removing = await checkUserIds(tx, actor.realm_id, del);
    for (const id of removing) if (!current.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
    await userGroupStore.addMembers(tx, group.id, adding);
    await userGroupStore.removeMembers(tx, group.id, removing);
    const row = await reload(tx, actor.realm_id, group.id);
    if (adding.length > 0) await announce(tx, actor.realm_id, { type: 'user_group', op: 'add_members', group_id: group.id, user_ids: adding.sort((a, b) => a - b) }, removing.length ? [] : [{ row }]);
    if (removing.length > 0) await announce(tx, actor.realm_id, { type: 'user_group', op: 'remove_members', group_id: group.id, user_ids: removing.sort((a, b) => a - b) }, [{ row }]);
  });
}

export async function checkUpdateUserGroupSubgroups(deps: UsersDeps, actor: Actor, groupId: number, add: readonly number[], del: readonly number[]): Promise<void> {
  await checkMayEditGroups(deps.pool, actor);
  checkAddOrDelete(add, del);
  await transaction(deps.pool, async (tx) => {
    const groups = await checkSubgroupIds(tx, actor.realm_id, [...add, ...del]);
    const group = await accessGroupForChange(tx, actor, groupId);
    const direct = new Set(group.direct_subgroup_ids);
    const adding = [...new Set(add)];
    const removing = [...new Set(del)];
    for (const id of adding) if (direct.has(id)) throw badRequest(`User group ${id} is already a subgroup of this group.`);
    // A group may not end up inside itself (Zulip refuses cycles).
    const shapes = groups as ReadonlyMap<number, GroupShape>;
    if (adding.some((id) => groupAndSubgroups(id, shapes).includes(group.id))) {
      throw badRequest(`User group ${group.id} is already a subgroup of one of the passed subgroups.`);
    }
    for (const id of removing) if (!direct.has(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
    await userGroupStore.addSubgroups(tx, group.id, adding);
    await userGroupStore.removeSubgroups(tx, group.id, removing);
    const row = await reload(tx, actor.realm_id, group.id);
    const sorted = (ids: number[]) => ids.sort((a, b) => a - b);
    if (adding.length > 0) await announce(tx, actor.realm_id, { type: 'user_group', op: 'add_subgroups', group_id: group.id, direct_subgroup_ids: sorted(adding) }, removing.length ? [] : [{ row }]);
    if (removing.length > 0) await announce(tx, actor.realm_id, { type: 'user_group', op: 'remove_subgroups', group_id: group.id, direct_subgroup_ids: sorted(removing) }, [{ row }]);
  });
}

/** Read paths of user groups: GET /user_groups and its members and subgroups, realm_user_groups, and the directory copies' load. */
import type { ApiUserGroup, Actor, UserGroupRecord } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { allMembers, directMembers, groupAndSubgroups, realmSettings, type GroupPeople, type GroupShape } from '@zc/shared/policy';
import type { UsersDeps } from '../deps.js';
import { invalidUserGroup, toApiUserGroup, toUserGroupRecord } from '../lib/user-group-rules.js';
import { realmStore } from '../store/realm-store.js';
import { userGroupStore, type UserGroupRow } from '../store/user-group-store.js';
import { userStore } from '../store/user-store.js';

/** The realm's users (deactivated ones too, as Zulip keeps their memberships) as system groups see them. */
export async function groupPeople(q: Queryable, realmId: number): Promise<GroupPeople> {
  // One after the other: `q` may be one client (a transaction, a snapshot read), which runs one query at a time.
  const realm = await realmStore.findById(q, realmId);
  const users = await userStore.listByRealm(q, realmId);
  // One clock for every user's waiting period: the one role:fullmembers is announced up to.
  return { users, waitingPeriodDays: realm ? realmSettings(realm.settings).waiting_period_threshold : 0, now: realm?.full_members_swept_at ?? new Date() };
}

/** The realm's groups with their direct members (`people` when the caller has already read them). */
export async function listUserGroups(q: Queryable, realmId: number, people?: GroupPeople): Promise<ApiUserGroup[]> {
  // One after the other: `q` may be one client (a transaction, a snapshot read), which runs one query at a time.
  const groups = await userGroupStore.listForRealm(q, realmId);
  const known = people ?? (await groupPeople(q, realmId));
  return groups.map((g) => toApiUserGroup(g, known));
}

export async function realmUserGroupRecords(deps: UsersDeps, realmId: number): Promise<UserGroupRecord[]> {
  return (await userGroupStore.listForRealm(deps.pool, realmId)).map((g) => toUserGroupRecord(g));
}

async function groupsOf(deps: UsersDeps, actor: Actor, groupId: number): Promise<{ group: UserGroupRow; byId: Map<number, GroupShape> }> {
  const groups = await userGroupStore.listForRealm(deps.pool, actor.realm_id);
  const group = groups.find((g) => g.id === groupId);
  if (!group) throw invalidUserGroup();
  return { group, byId: new Map(groups.map((g) => [g.id, g])) };
}

const ascending = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

/** GET /user_groups/{id}/members: direct members, or everyone through subgroups too. */
export async function getUserGroupMembers(deps: UsersDeps, actor: Actor, groupId: number, directOnly: boolean): Promise<number[]> {
  const { group, byId } = await groupsOf(deps, actor, groupId);
  const people = await groupPeople(deps.pool, actor.realm_id);
  return ascending(directOnly ? directMembers(group, people) : allMembers([group.id], byId, people));
}

/** GET /user_groups/{id}/members/{user_id}. */
export async function isUserGroupMember(deps: UsersDeps, actor: Actor, groupId: number, userId: number, directOnly: boolean): Promise<boolean> {
  const { group, byId } = await groupsOf(deps, actor, groupId);
  const user = await userStore.findById(deps.pool, actor.realm_id, userId);
  if (!user || user.is_system_bot) throw badRequest('No such user');
  const people = await groupPeople(deps.pool, actor.realm_id);
  return (directOnly ? directMembers(group, people) : [...allMembers([group.id], byId, people)]).includes(userId);
}

/** GET /user_groups/{id}/subgroups: direct subgroups, or every group below. */
export async function getUserGroupSubgroups(deps: UsersDeps, actor: Actor, groupId: number, directOnly: boolean): Promise<number[]> {
  const { group, byId } = await groupsOf(deps, actor, groupId);
  return ascending(directOnly ? group.direct_subgroup_ids : groupAndSubgroups(group.id, byId).filter((id) => id !== group.id));
}

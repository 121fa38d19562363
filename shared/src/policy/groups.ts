/**
 * User groups' rules that need no I/O: Zulip's system groups (one set per realm, their
 * members given by roles, nested as Zulip nests them) and the members of a group through
 * its subgroups. Used by the users service, which owns groups, and by every service's copy
 * of the directory (mentions, group-based permissions).
 */
import { Role } from '../contracts/common.js';
import { isNewMember, type PolicySubject } from './index.js';

/** Zulip's system groups, in its creation order; each one's direct subgroup is the next (internet ⊃ everyone ⊃ …). */
export const SYSTEM_GROUPS = [
  { name: 'role:internet', description: 'Everyone on the Internet' },
  { name: 'role:everyone', description: 'Everyone including guests' },
  { name: 'role:members', description: 'Everyone except guests' },
  { name: 'role:fullmembers', description: 'Members of this organization, not including new accounts and guests' },
  { name: 'role:moderators', description: 'Moderators of this organization, including administrators' },
  { name: 'role:administrators', description: 'Administrators of this organization, including owners' },
  { name: 'role:owners', description: 'Owners of this organization' },
  { name: 'role:nobody', description: 'Nobody' },
] as const;

export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]['name'];

/**
 * A realm's system groups have fixed ids, realm_id * 8 + position: streams name
 * role:administrators by id (can_remove_subscribers_group_id) and every service computes
 * it alike. Other groups take ids from USER_GROUP_FIRST_ID on, which no realm's block reaches.
 */
export function systemGroupId(realmId: number, name: SystemGroupName): number {
  return realmId * SYSTEM_GROUPS.length + SYSTEM_GROUPS.findIndex((g) => g.name === name);
}
export const USER_GROUP_FIRST_ID = 1_000_000_000;

/** The direct subgroup of each system group (Zulip's nesting); role:owners and role:nobody have none. */
export function systemSubgroupOf(name: SystemGroupName): SystemGroupName | undefined {
  const i = SYSTEM_GROUPS.findIndex((g) => g.name === name);
  return i >= 0 && i < 6 ? SYSTEM_GROUPS[i + 1]?.name : undefined;
}

export const isSystemGroupName = (name: string): name is SystemGroupName => SYSTEM_GROUPS.some((g) => g.name === name);

/**
 * Whether `user` is a direct member of a system group, as Zulip files users by role: owners,
 * administrators and moderators in their role's group, every member in role:members and the
 * full ones also in role:fullmembers, guests in role:everyone.
 */
export function isDirectSystemGroupMember(name: SystemGroupName, user: PolicySubject, waitingPeriodDays: number, now = new Date()): boolean {
  switch (name) {
    case 'role:owners':
      return user.role === Role.OWNER;
    case 'role:administrators':
      return user.role === Role.ADMINISTRATOR;
    case 'role:moderators':
      return user.role === Role.MODERATOR;
    case 'role:fullmembers':
      return user.role === Role.MEMBER && !isNewMember(user, waitingPeriodDays, now);
    case 'role:members':
      return user.role === Role.MEMBER;
    case 'role:everyone':
      return user.role === Role.GUEST;
    default:
      return false;
  }
}

/** A group as the rules see it: direct members (empty for system groups) and direct subgroups. */
export interface GroupShape {
  id: number;
  name: string;
  is_system_group: boolean;
  members: readonly number[];
  direct_subgroup_ids: readonly number[];
}

export interface GroupPeople {
  /** Active users with what system groups look at. */
  users: Iterable<PolicySubject & { id: number }>;
  waitingPeriodDays: number;
  now?: Date;
}

/** The direct members of a group: stored ones, or for a system group the users its role rule picks. */
export function directMembers(g: GroupShape, people: GroupPeople): number[] {
  if (!g.is_system_group || !isSystemGroupName(g.name)) return [...g.members];
  const name = g.name;
  const out: number[] = [];
  for (const u of people.users) if (isDirectSystemGroupMember(name, u, people.waitingPeriodDays, people.now)) out.push(u.id);
  return out;
}

/** The group and every group below it (each once, cycles ignored), starting with the group itself. */
export function groupAndSubgroups(groupId: number, groupsById: ReadonlyMap<number, GroupShape>): number[] {
  const seen = new Set<number>([groupId]);
  const queue = [groupId];
  while (queue.length > 0) {
    const g = groupsById.get(queue.shift() as number);
    for (const sub of g?.direct_subgroup_ids ?? []) {
      if (!seen.has(sub)) {
        seen.add(sub);
        queue.push(sub);
      }
    }
  }
  return [...seen];
}

/** The realm's groups by id, with its system groups added where `groups` lacks them (they follow from the realm alone). */
export function withSystemGroups(realmId: number, groups: Iterable<GroupShape>): Map<number, GroupShape> {
  const byId = new Map<number, GroupShape>();
  for (const g of groups) byId.set(g.id, g);
  for (const { name } of SYSTEM_GROUPS) {
    const id = systemGroupId(realmId, name);
    const sub = systemSubgroupOf(name);
    if (!byId.has(id)) byId.set(id, { id, name, is_system_group: true, members: [], direct_subgroup_ids: sub ? [systemGroupId(realmId, sub)] : [] });
  }
  return byId;
}

/** Every member of the groups, directly or through subgroups at any depth. */
export function allMembers(groupIds: Iterable<number>, groupsById: ReadonlyMap<number, GroupShape>, people: GroupPeople): Set<number> {
  const out = new Set<number>();
  const seen = new Set<number>();
  for (const id of groupIds) {
    for (const g of groupAndSubgroups(id, groupsById)) {
      if (seen.has(g)) continue;
      seen.add(g);
      const group = groupsById.get(g);
      if (group) for (const m of directMembers(group, people)) out.add(m);
    }
  }
  return out;
}

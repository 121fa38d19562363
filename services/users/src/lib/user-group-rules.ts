/** User groups' request rules that need no I/O (Zulip's check_user_group_name and its messages). */
import { badRequest } from '@zc/shared/errors';
import type { ApiUserGroup, UserGroupRecord } from '@zc/shared/contracts';
import { directMembers, type GroupPeople } from '@zc/shared/policy';
import type { UserGroupRow } from '../store/user-group-store.js';

export const MAX_USER_GROUP_NAME_LENGTH = 100;
const RESERVED_PREFIXES = ['@', 'role:', 'user:', 'stream:', 'channel:'];

export const insufficientPermission = () => badRequest('Insufficient permission');
export const invalidUserGroup = () => badRequest('Invalid user group');

export function checkUserGroupName(name: string): string {
  if (name.trim() === '') throw badRequest("User group name can't be empty!");
  if (name.length > MAX_USER_GROUP_NAME_LENGTH) throw badRequest(`User group name cannot exceed ${MAX_USER_GROUP_NAME_LENGTH} characters.`);
  const prefix = RESERVED_PREFIXES.find((p) => name.startsWith(p));
  if (prefix !== undefined) throw badRequest(`User group name cannot start with '${prefix}'.`);
  return name;
}

/** "Nothing to do" for a members or subgroups update without either list. */
export function checkAddOrDelete(add: readonly number[], del: readonly number[]): void {
  if (add.length === 0 && del.length === 0) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
}

export function toApiUserGroup(g: UserGroupRow, people: GroupPeople): ApiUserGroup {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    members: directMembers(g, people).sort((a, b) => a - b),
    direct_subgroup_ids: [...g.direct_subgroup_ids],
    is_system_group: g.is_system_group,
  };
}

export function toUserGroupRecord(g: UserGroupRow, deleted = false): UserGroupRecord {
  return {
    realm_id: g.realm_id,
    group_id: g.id,
    name: g.name,
    is_system_group: g.is_system_group,
    members: [...g.members],
    direct_subgroup_ids: [...g.direct_subgroup_ids],
    deleted,
  };
}

/** `user_group` client event schemas (api-notes §2.3, feature level 155 shapes). */
import { Type, type TSchema } from '@sinclair/typebox';
import { ApiUserGroup } from '../user-groups.js';

const base = { id: Type.Integer(), type: Type.Literal('user_group') };
const strict = { additionalProperties: false } as const;
const ids = Type.Array(Type.Integer());

export const UserGroupAddEvent = Type.Object({ ...base, op: Type.Literal('add'), group: ApiUserGroup }, strict);
export const UserGroupUpdateEvent = Type.Object(
  { ...base, op: Type.Literal('update'), group_id: Type.Integer(), data: Type.Object({ name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }, strict) },
  strict,
);
export const UserGroupAddMembersEvent = Type.Object({ ...base, op: Type.Literal('add_members'), group_id: Type.Integer(), user_ids: ids }, strict);
export const UserGroupRemoveMembersEvent = Type.Object({ ...base, op: Type.Literal('remove_members'), group_id: Type.Integer(), user_ids: ids }, strict);
export const UserGroupAddSubgroupsEvent = Type.Object({ ...base, op: Type.Literal('add_subgroups'), group_id: Type.Integer(), direct_subgroup_ids: ids }, strict);
export const UserGroupRemoveSubgroupsEvent = Type.Object({ ...base, op: Type.Literal('remove_subgroups'), group_id: Type.Integer(), direct_subgroup_ids: ids }, strict);
export const UserGroupRemoveEvent = Type.Object({ ...base, op: Type.Literal('remove'), group_id: Type.Integer() }, strict);

export const USER_GROUP_EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = {
  'user_group/add': UserGroupAddEvent,
  'user_group/update': UserGroupUpdateEvent,
  'user_group/add_members': UserGroupAddMembersEvent,
  'user_group/remove_members': UserGroupRemoveMembersEvent,
  'user_group/add_subgroups': UserGroupAddSubgroupsEvent,
  'user_group/remove_subgroups': UserGroupRemoveSubgroupsEvent,
  'user_group/remove': UserGroupRemoveEvent,
};

/** User groups (spec 4.19; owned by the users service): requests, replies and domain events. */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { Actor } from './common.js';

/** A group as /register's realm_user_groups and GET /user_groups show it (feature level 155). */
export const ApiUserGroup = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  /** Direct members, by id. */
  members: Type.Array(Type.Integer()),
  direct_subgroup_ids: Type.Array(Type.Integer()),
  is_system_group: Type.Boolean(),
});
export type ApiUserGroup = Static<typeof ApiUserGroup>;

/**
 * A group as other services keep it in their copy of the directory, whole after every
 * change. A system group's members are not listed: its role rule gives them
 * (@zc/shared/policy, directMembers).
 */
export const UserGroupRecord = Type.Object({
  realm_id: Type.Integer(),
  group_id: Type.Integer(),
  name: Type.String(),
  is_system_group: Type.Boolean(),
  members: Type.Array(Type.Integer()),
  direct_subgroup_ids: Type.Array(Type.Integer()),
  /** The group was deleted; copies drop it. */
  deleted: Type.Boolean(),
});
export type UserGroupRecord = Static<typeof UserGroupRecord>;

const GroupRef = { actor: Actor, group_id: Type.Integer() };
const AddDelete = { add: Type.Array(Type.Integer()), delete: Type.Array(Type.Integer()) };

export const userGroups = {
  list: rpc('users.v1.list_user_groups', { safe: true, request: Type.Object({ actor: Actor }), reply: Type.Object({ user_groups: Type.Array(ApiUserGroup) }) }),
  create: rpc('users.v1.create_user_group', {
    request: Type.Object({ actor: Actor, name: Type.String(), description: Type.String(), members: Type.Array(Type.Integer()), subgroups: Type.Array(Type.Integer()) }),
    reply: Type.Object({ group_id: Type.Integer() }),
  }),
  update: rpc('users.v1.update_user_group', {
    request: Type.Object({ ...GroupRef, name: Type.Optional(Type.String()), description: Type.Optional(Type.String()) }),
    reply: Type.Object({}),
  }),
  remove: rpc('users.v1.remove_user_group', { request: Type.Object(GroupRef), reply: Type.Object({}) }),
  updateMembers: rpc('users.v1.update_user_group_members', { request: Type.Object({ ...GroupRef, ...AddDelete }), reply: Type.Object({}) }),
  updateSubgroups: rpc('users.v1.update_user_group_subgroups', { request: Type.Object({ ...GroupRef, ...AddDelete }), reply: Type.Object({}) }),
  members: rpc('users.v1.user_group_members', {
    request: Type.Object({ ...GroupRef, direct_member_only: Type.Boolean() }),
    reply: Type.Object({ members: Type.Array(Type.Integer()) }),
  }),
  isMember: rpc('users.v1.is_user_group_member', {
    request: Type.Object({ ...GroupRef, user_id: Type.Integer(), direct_member_only: Type.Boolean() }),
    reply: Type.Object({ is_user_group_member: Type.Boolean() }),
  }),
  subgroups: rpc('users.v1.user_group_subgroups', {
    request: Type.Object({ ...GroupRef, direct_subgroup_only: Type.Boolean() }),
    reply: Type.Object({ subgroups: Type.Array(Type.Integer()) }),
  }),
  /** Every group of a realm, for a service loading its directory copy. */
  realmGroups: rpc('users.v1.realm_user_groups', { safe: true, request: Type.Object({ realm_id: Type.Integer() }), reply: Type.Object({ groups: Type.Array(UserGroupRecord) }) }),
} as const;

export const userGroupEvents = {
  /** A group was created, changed (name, members, subgroups) or deleted; carries the whole group. */
  changed: event('users.evt.v1.user_group.changed', UserGroupRecord),
} as const;

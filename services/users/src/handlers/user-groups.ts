/** Bus adapters of user groups. */
import type { Bus } from '@zc/shared/bus';
import { userGroups } from '@zc/shared/contracts';
import {
  checkCreateUserGroup,
  checkRemoveUserGroup,
  checkUpdateUserGroup,
  checkUpdateUserGroupMembers,
  checkUpdateUserGroupSubgroups,
} from '../actions/user-groups.js';
import type { UsersDeps } from '../deps.js';
import { getUserGroupMembers, getUserGroupSubgroups, isUserGroupMember, listUserGroups, realmUserGroupRecords } from '../queries/user-groups.js';

export function registerUserGroupHandlers(bus: Pick<Bus, 'serve'>, deps: UsersDeps): void {
  bus.serve(userGroups.list, async (r) => ({ user_groups: await listUserGroups(deps.pool, r.actor.realm_id) }));
  bus.serve(userGroups.create, async ({ actor, ...r }) => ({ group_id: await checkCreateUserGroup(deps, actor, r) }));
  bus.serve(userGroups.update, async ({ actor, group_id, ...r }) => {
    await checkUpdateUserGroup(deps, actor, group_id, r);
    return {};
  });
  bus.serve(userGroups.remove, async (r) => {
    await checkRemoveUserGroup(deps, r.actor, r.group_id);
    return {};
  });
  bus.serve(userGroups.updateMembers, async (r) => {
    await checkUpdateUserGroupMembers(deps, r.actor, r.group_id, r.add, r.delete);
    return {};
  });
  bus.serve(userGroups.updateSubgroups, async (r) => {
    await checkUpdateUserGroupSubgroups(deps, r.actor, r.group_id, r.add, r.delete);
    return {};
  });
  bus.serve(userGroups.members, async (r) => ({ members: await getUserGroupMembers(deps, r.actor, r.group_id, r.direct_member_only) }));
  bus.serve(userGroups.isMember, async (r) => ({
    is_user_group_member: await isUserGroupMember(deps, r.actor, r.group_id, r.user_id, r.direct_member_only),
  }));
  bus.serve(userGroups.subgroups, async (r) => ({ subgroups: await getUserGroupSubgroups(deps, r.actor, r.group_id, r.direct_subgroup_only) }));
  bus.serve(userGroups.realmGroups, async (r) => ({ groups: await realmUserGroupRecords(deps, r.realm_id) }));
}

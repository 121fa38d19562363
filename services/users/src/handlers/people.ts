/** Bus adapters for people administration: users' names, roles and profile data, custom profile fields, bot storage. */
import type { Bus } from '@zc/shared/bus';
import { users } from '@zc/shared/contracts';
import type { UsersDeps } from '../deps.js';
import { checkRemoveBotStorage, checkUpdateBotStorage, getBotStorage } from '../actions/bot-storage.js';
import { checkReactivateUser, checkUpdateUser } from '../actions/people-admin.js';
import { checkUpdateUserStatus } from '../actions/user-status.js';
import { checkRemoveOwnProfileData, checkUpdateOwnProfileData } from '../actions/profile-data.js';
import {
  checkCreateProfileField,
  checkRemoveProfileField,
  checkReorderProfileFields,
  checkUpdateProfileField,
  listProfileFields,
} from '../actions/profile-fields.js';

export function registerPeopleHandlers(bus: Pick<Bus, 'serve'>, deps: UsersDeps): void {
  bus.serve(users.updateUser, async ({ actor, user_id, ...changes }) => {
    await checkUpdateUser(deps, actor, user_id, changes);
    return {};
  });
  bus.serve(users.reactivate, async (r) => {
    await checkReactivateUser(deps, r.actor, r.user_id);
    return {};
  });
  bus.serve(users.listProfileFields, async (r) => ({ custom_fields: await listProfileFields(deps.pool, r.actor.realm_id) }));
  bus.serve(users.createProfileField, async ({ actor, ...f }) => ({ id: await checkCreateProfileField(deps, actor, f) }));
  bus.serve(users.updateProfileField, async ({ actor, id, ...changes }) => {
    await checkUpdateProfileField(deps, actor, id, changes);
    return {};
  });
  bus.serve(users.removeProfileField, async (r) => {
    await checkRemoveProfileField(deps, r.actor, r.id);
    return {};
  });
  bus.serve(users.reorderProfileFields, async (r) => {
    await checkReorderProfileFields(deps, r.actor, r.order);
    return {};
  });
  bus.serve(users.updateOwnProfileData, async (r) => {
    await checkUpdateOwnProfileData(deps, r.actor, r.data);
    return {};
  });
  bus.serve(users.removeOwnProfileData, async (r) => {
    await checkRemoveOwnProfileData(deps, r.actor, r.data);
    return {};
  });
  bus.serve(users.getBotStorage, async (r) => ({ storage: await getBotStorage(deps, r.actor, r.keys) }));
  bus.serve(users.updateBotStorage, async (r) => {
    await checkUpdateBotStorage(deps, r.actor, r.storage);
    return {};
  });
  bus.serve(users.removeBotStorage, async (r) => {
    await checkRemoveBotStorage(deps, r.actor, r.keys);
    return {};
  });
  bus.serve(users.updateStatus, async ({ actor, ...r }) => {
    await checkUpdateUserStatus(deps, actor, r);
    return {};
  });
}

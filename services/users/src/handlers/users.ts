/** Bus adapters of the users service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { users } from '@zc/shared/contracts';
import { authenticate, fetchApiKey } from '../actions/auth.js';
import { checkCreateUser } from '../actions/users.js';
import type { UsersDeps } from '../deps.js';
import { getRegisterState } from '../queries/register-state.js';
import { getOwnUser, getServerSettings, getUser, listUsers, realmSnapshot, resolveUsers } from '../queries/users.js';
import { realmStore } from '../store/realm-store.js';

export function registerUserHandlers(bus: Bus, deps: UsersDeps): void {
  bus.serve(users.authenticate, async (r) => {
    const actor = await authenticate(deps, r);
    const realm = await realmStore.findById(deps.pool, actor.realm_id);
    return { actor, realm_deactivated: realm?.deactivated ?? false };
  });
  bus.serve(users.serverSettings, (r) => getServerSettings(deps, r.realm_subdomain, r.client_name));
  bus.serve(users.fetchApiKey, (r) => fetchApiKey(deps, r));
  bus.serve(users.list, async (r) => ({ members: await listUsers(deps, r.actor, r) }));
  bus.serve(users.get, async (r) => ({ user: await getUser(deps, r.actor, { user_id: r.user_id, email: r.email }, r) }));
  bus.serve(users.me, (r) => getOwnUser(deps, r.actor));
  bus.serve(users.create, async (r) => ({ user_id: await checkCreateUser(deps, r.actor, r) }));
  bus.serve(users.resolve, (r) => resolveUsers(deps, r.realm_id, r.user_ids, r.emails));
  bus.serve(users.realmSnapshot, (r) => realmSnapshot(deps, r.realm_id));
  bus.serve(users.registerState, (r) => getRegisterState(deps, r.actor, r.fetch, r.options));
}

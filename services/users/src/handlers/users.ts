/** Bus adapters of the users service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { users, registerStateReply } from '@zc/shared/contracts';
import { authenticate, fetchApiKey } from '../actions/auth.js';
import {
  checkAddLinkifier,
  checkRemoveLinkifier,
  checkReorderLinkifiers,
  checkUpdateLinkifier,
  doAddAlertWords,
  doRemoveAlertWords,
  toLinkifier,
} from '../actions/linkifiers.js';
import { checkDeactivateUser, doRegenerateApiKey } from '../actions/account-state.js';
import { doMuteUser, doUnmuteUser } from '../actions/muted-users.js';
import { checkAddPlayground, checkRemovePlayground } from '../actions/playgrounds.js';
import { checkUpdateUserSettingsDefaults } from '../actions/user-settings-defaults.js';
import { doUpdatePresence } from '../actions/presence.js';
import { checkCreateUser } from '../actions/users.js';
import { templateToLegacyFormat } from '../lib/linkifier-rules.js';
import { alertWordStore, linkifierStore } from '../store/linkifier-store.js';
import type { UsersDeps } from '../deps.js';
import { getRealmPresenceJson, getUserPresence } from '../queries/presence.js';
import { getRegisterState } from '../queries/register-state.js';
import { getUserSettings } from '../queries/user-settings.js';
import { checkUpdateSettings } from '../actions/user-settings.js';
import { checkUpdateRealm } from '../actions/realm-settings.js';
import { getOwnUser, getRealmRecord, getServerSettings, getUser, listUsers, realmSnapshot, resolveUsers } from '../queries/users.js';
import { presenceEmails } from '../presence/people-cache.js';

export function registerUserHandlers(bus: Pick<Bus, 'serve'>, deps: UsersDeps): void {
  bus.serve(users.authenticate, async (r) => {
    const { actor, realm, tokens } = await authenticate(deps, r);
    return { actor, realm_deactivated: realm.deactivated, credential_tokens: tokens };
  });
  bus.serve(users.serverSettings, (r) => getServerSettings(deps, r.realm_subdomain, r.client_name));
  bus.serve(users.fetchApiKey, (r) => fetchApiKey(deps, r));
  bus.serve(users.list, async (r) => ({ members: await listUsers(deps, r.actor, r) }));
  bus.serve(users.get, async (r) => ({ user: await getUser(deps, r.actor, { user_id: r.user_id, email: r.email }, r) }));
  bus.serve(users.me, (r) => getOwnUser(deps, r.actor));
  bus.serve(users.create, async (r) => ({ user_id: await checkCreateUser(deps, r.actor, r) }));
  bus.serve(users.resolve, (r) => resolveUsers(deps, r.realm_id, r.user_ids, r.emails));
  bus.serve(users.realmSnapshot, (r) => realmSnapshot(deps, r.realm_id));
  bus.serve(users.realm, async (r) => ({ realm: await getRealmRecord(deps, r.realm_id) }));
  bus.serve(users.deactivate, async (r) => {
    await checkDeactivateUser(deps, r.actor, r.user_id);
    return {};
  });
  bus.serve(users.regenerateApiKey, async (r) => ({ api_key: await doRegenerateApiKey(deps, r.actor.realm_id, r.actor.user_id) }));
  bus.serve(users.listLinkifiers, async (r) => {
    const rows = await linkifierStore.listForRealm(deps.pool, r.realm_id);
    return {
      linkifiers: rows.map(toLinkifier),
      filters: rows.map((l) => [l.pattern, templateToLegacyFormat(l.url_template), l.id] as [string, string, number]),
    };
  });
  bus.serve(users.addLinkifier, async ({ actor, ...input }) => ({ id: await checkAddLinkifier(deps, actor, input) }));
  bus.serve(users.updateLinkifier, async ({ actor, id, ...input }) => {
    await checkUpdateLinkifier(deps, actor, id, input);
    return {};
  });
  bus.serve(users.removeLinkifier, async (r) => {
    await checkRemoveLinkifier(deps, r.actor, r.id);
    return {};
  });
  bus.serve(users.reorderLinkifiers, async (r) => {
    await checkReorderLinkifiers(deps, r.actor, r.ordered_linkifier_ids);
    return {};
  });
  bus.serve(users.addPlayground, async ({ actor, ...input }) => ({ id: await checkAddPlayground(deps, actor, input) }));
  bus.serve(users.removePlayground, async (r) => {
    await checkRemovePlayground(deps, r.actor, r.id);
    return {};
  });
  bus.serve(users.updateUserSettingsDefaults, async (r) => {
    await checkUpdateUserSettingsDefaults(deps, r.actor, r.settings);
    return {};
  });
  bus.serve(users.muteUser, async (r) => {
    await doMuteUser(deps, r.actor, r.muted_user_id);
    return {};
  });
  bus.serve(users.unmuteUser, async (r) => {
    await doUnmuteUser(deps, r.actor, r.muted_user_id);
    return {};
  });
  bus.serve(users.listAlertWords, async (r) => ({ alert_words: await alertWordStore.listForUser(deps.pool, r.actor.user_id) }));
  bus.serve(users.addAlertWords, async (r) => ({ alert_words: await doAddAlertWords(deps, r.actor, r.alert_words) }));
  bus.serve(users.removeAlertWords, async (r) => ({ alert_words: await doRemoveAlertWords(deps, r.actor, r.alert_words) }));
  bus.serve(users.updateSettings, ({ actor, ...change }) => checkUpdateSettings(deps, actor, change));
  bus.serve(users.userSettings, async (r) => ({ users: await getUserSettings(deps, r.realm_id, r.user_ids) }));
  bus.serve(users.updateRealm, (r) => checkUpdateRealm(deps, r.actor, r.changes));
  bus.serve(users.updatePresence, async ({ actor, status, ping_only, ...fetch }) => {
    await doUpdatePresence(deps, actor, status);
    return ping_only ? {} : getRealmPresenceJson(deps, actor, fetch);
  });
  bus.serve(users.realmPresence, ({ actor, ...fetch }) => getRealmPresenceJson(deps, actor, fetch));
  bus.serve(users.presenceEmails, async ({ actor, user_ids }) => ({
    emails: Object.fromEntries(await presenceEmails(deps, deps.pool, actor.realm_id, user_ids)),
  }));
  bus.serve(users.userPresence, (r) => getUserPresence(deps, r.actor, r));
  bus.serve(users.registerState, async (r) => {
    const { snapshot, state } = await getRegisterState(deps, r.actor, r.fetch, r.options);
    return registerStateReply(snapshot, state);
  });
}

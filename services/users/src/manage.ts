/**
 * What the management CLI needs: the users actions run directly against the database (the
 * outbox carries their events to the bus whenever the service runs), so the CLI works
 * whether or not the system is up.
 */
export { doCreateRealm, doCreateUser, doGrant, type NewAccount } from './actions/users.js';
export { doDeactivateUser, doRegenerateApiKey } from './actions/account-state.js';
export { doDeactivateRealm, doReactivateRealm } from './actions/realm-state.js';
// Zulip's promote_new_full_members, run every minute by the service; tests run it at will.
export { doAnnounceNewFullMembers } from './actions/full-members.js';
export { makeDeps, realmHostOf, type UsersDeps } from './deps.js';
// Bulk seeding (benchmarks) announces accounts to the other services' read models as the service does.
export { toUserRecord } from './lib/user-view.js';
export { realmStore } from './store/realm-store.js';
export { ApiKeyVault, generateApiKey } from './lib/credentials.js';
export { MIGRATIONS_DIR } from './service.js';
export { checkReactivateUser, checkUpdateUser } from './actions/people-admin.js';
export { userStore } from './store/user-store.js';
export { doChangeEmail, doSetPassword, listRealms, listUsers, ownerActor } from './admin.js';

/**
 * Deactivating and reactivating a whole realm (Zulip's do_deactivate_realm and
 * do_reactivate_realm, run by an operator: `npm run manage -- deactivate-realm`).
 *
 * Deactivation, in one transaction: the realm's row says so (authentication then refuses every
 * user of the realm with REALM_DEACTIVATED), the other services hear `realmUpdated`, and every
 * active user gets the `realm`/`deactivated` client event Zulip sends. After the commit and
 * before answering, the realm's credential token is renewed, so every gateway replica refuses
 * the realm's cached API keys from then on (see credential-revocation.ts). The events service
 * drops the realm's event queues when it delivers that event to them: a poll parked on one gets
 * the event first, and no poll can follow it (authentication refuses the realm).
 *
 * Reactivation sends no client event (Zulip sends none); the users log in again as before.
 */
import { eventsInbox, usersEvents } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { realmUrlOf, type UsersDeps } from '../deps.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { realmStore } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';
import { revokeCredentialsOf } from './credential-revocation.js';
import { presencePeopleChanged } from '../presence/people-cache.js';

/** Whether the realm was changed (false: it already was in that state). */
async function setRealmDeactivated(deps: UsersDeps, realmId: number, deactivated: boolean): Promise<boolean> {
  const changed = await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findByIdForUpdate(tx, realmId);
    if (!realm) throw badRequest('Invalid realm');
    if (realm.deactivated === deactivated) return false;
    const updated = await realmStore.setDeactivated(tx, realm.id, deactivated);
    await addToOutbox(tx, 'users', usersEvents.realmUpdated, toRealmRecord(updated, realmUrlOf(deps, updated)));
    if (deactivated) {
      const everyone = await userStore.listActiveIds(tx, realm.id);
      await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realm.id, users: everyone, event: { type: 'realm', op: 'deactivated', realm_id: realm.id } });
    }
    return true;
  });
  // Reactivation too: a replica must not keep refusing from a cached "deactivated" answer.
  if (changed) {
    await revokeCredentialsOf(deps, { realmIds: [realmId] });
    await presencePeopleChanged(deps, realmId);
  }
  return changed;
}

export function doDeactivateRealm(deps: UsersDeps, realmId: number): Promise<boolean> {
  return setRealmDeactivated(deps, realmId, true);
}

export function doReactivateRealm(deps: UsersDeps, realmId: number): Promise<boolean> {
  return setRealmDeactivated(deps, realmId, false);
}

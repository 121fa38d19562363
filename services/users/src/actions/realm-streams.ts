/**
 * A new realm's notifications stream (Zulip's do_create_realm sets it to "general"): the
 * subscriptions service makes the stream and tells this service through its inbox, and the
 * realm setting changes as if an administrator had chosen it, events included.
 */
import { eventsInbox, usersEvents } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { realmSettings } from '@zc/shared/policy';
import { realmUrlOf, type UsersDeps } from '../deps.js';
import { realmChangeEvent } from '../lib/realm-settings.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { realmStore } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';

/** Sets the realm's notifications stream unless it has one (an administrator's choice, or a redelivery). */
export async function doSetNewRealmNotificationsStream(deps: UsersDeps, r: { realm_id: number; stream_id: number }): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findByIdForUpdate(tx, r.realm_id);
    if (!realm || realmSettings(realm.settings).notifications_stream_id !== -1) return;
    const updated = await realmStore.update(tx, realm.id, { name: realm.name, description: realm.description, settings: { notifications_stream_id: r.stream_id } });
    await addToOutbox(tx, 'users', usersEvents.realmUpdated, toRealmRecord(updated, realmUrlOf(deps, updated)));
    const everyone = await userStore.listActiveIds(tx, realm.id);
    if (everyone.length > 0) {
      await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realm.id, users: everyone, event: realmChangeEvent('notifications_stream_id', r.stream_id) });
    }
  });
}

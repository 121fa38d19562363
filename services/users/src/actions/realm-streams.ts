/**
 * Realm settings that name a stream, changed by what the subscriptions service does to its
 * streams (it tells this service through its inbox): a new realm's "general" becomes its
 * notifications stream (Zulip's do_create_realm), and an archived stream stops being one
 * (Zulip's get_notifications_stream ignores a deactivated stream). Each change is made as if
 * an administrator had made it, events included, and is harmless when redelivered.
 */
import { eventsInbox, usersEvents } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { realmSettings } from '@zc/shared/policy';
import { realmUrlOf, type UsersDeps } from '../deps.js';
import { realmChangeEvent } from '../lib/realm-settings.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';

type StreamSetting = 'notifications_stream_id' | 'signup_notifications_stream_id';
const STREAM_SETTINGS: readonly StreamSetting[] = ['notifications_stream_id', 'signup_notifications_stream_id'];

/** Writes `settings` and tells the other services and everyone in the realm. */
async function changeSettings(deps: UsersDeps, tx: Queryable, realm: RealmRow, settings: Partial<Record<StreamSetting, number>>): Promise<void> {
  const updated = await realmStore.update(tx, realm.id, { name: realm.name, description: realm.description, settings });
  await addToOutbox(tx, 'users', usersEvents.realmUpdated, toRealmRecord(updated, realmUrlOf(deps, updated)));
  const everyone = await userStore.listActiveIds(tx, realm.id);
  if (everyone.length === 0) return;
  for (const [name, value] of Object.entries(settings)) {
    await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realm.id, users: everyone, event: realmChangeEvent(name, value) });
  }
}

/** Sets the realm's notifications stream unless it has one (an administrator's choice, or a redelivery). */
export async function doSetNewRealmNotificationsStream(deps: UsersDeps, r: { realm_id: number; stream_id: number }): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findByIdForUpdate(tx, r.realm_id);
    if (!realm || realmSettings(realm.settings).notifications_stream_id !== -1) return;
    await changeSettings(deps, tx, realm, { notifications_stream_id: r.stream_id });
  });
}

/** The realm's notifications streams that were the archived stream name none (-1). */
export async function doForgetArchivedStream(deps: UsersDeps, r: { realm_id: number; stream_id: number }): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findByIdForUpdate(tx, r.realm_id);
    if (!realm) return;
    const current = realmSettings(realm.settings);
    const cleared = Object.fromEntries(STREAM_SETTINGS.filter((k) => current[k] === r.stream_id).map((k) => [k, -1]));
    if (Object.keys(cleared).length > 0) await changeSettings(deps, tx, realm, cleared);
  });
}

/**
 * PATCH /realm (Zulip's update_realm): organisation settings, administrators only and some
 * owners only. Every changed setting is announced to everyone as a `realm` client event, and
 * the whole realm as `realmUpdated`, which the services enforcing the policies keep.
 */
import { eventsInbox, isAdmin, Role, subscriptionsRpc, usersEvents, type Actor, type RealmSettingsPatch } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest, organizationAdministratorRequired, organizationOwnerRequired } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { realmUrlOf, type UsersDeps } from '../deps.js';
import { realmSettings } from '@zc/shared/policy';
import { changeReplyValue, normaliseRealmPatch, OWNER_ONLY_SETTINGS, realmChangeEvent } from '../lib/realm-settings.js';
import { toRealmRecord } from '../lib/realm-view.js';
import { realmStore } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';
import { revokeCredentialsOf } from './credential-revocation.js';
import { doFullMembersAfterWaitingPeriodChange } from './full-members.js';
import { presencePeopleChanged } from '../presence/people-cache.js';


const STREAM_SETTINGS = ['notifications_stream_id', 'signup_notifications_stream_id'] as const;

/** A notifications stream must be one the administrator can reach (Zulip's access_stream_by_id, admins allowed). */
async function checkStream(deps: UsersDeps, actor: Actor, streamId: number): Promise<void> {
  if (streamId === -1) return;
  if (!deps.bus) throw badRequest('Invalid stream ID');
  const { stream } = await deps.bus.request(subscriptionsRpc.streamAccess, {
    realm_id: actor.realm_id,
    user_id: actor.user_id,
    stream: { stream_id: streamId },
  });
  if (!stream) throw badRequest('Invalid stream ID');
}

/** Applies a PATCH /realm request; returns the changed settings as Zulip's reply lists them. */
export async function checkUpdateRealm(deps: UsersDeps, actor: Actor, patch: RealmSettingsPatch): Promise<Record<string, unknown>> {
  if (!isAdmin(actor)) throw organizationAdministratorRequired();
  const asked = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
  if (actor.role !== Role.OWNER && asked.some((k) => OWNER_ONLY_SETTINGS.has(k))) throw organizationOwnerRequired();
  const values = normaliseRealmPatch(patch);
  for (const k of STREAM_SETTINGS) if (typeof values[k] === 'number') await checkStream(deps, actor, values[k] as number);

  const reply = await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findByIdForUpdate(tx, actor.realm_id);
    if (!realm) throw badRequest('Invalid realm');
    const current: Record<string, unknown> = { ...realmSettings(realm.settings), name: realm.name, description: realm.description };
    const changed = Object.keys(values).filter((k) => JSON.stringify(current[k]) !== JSON.stringify(values[k]));
    if (changed.length === 0) return {};

    const settings: Record<string, unknown> = {};
    for (const k of changed) if (k !== 'name' && k !== 'description') settings[k] = values[k];
    const updated = await realmStore.update(tx, realm.id, {
      name: changed.includes('name') ? (values.name as string) : realm.name,
      description: changed.includes('description') ? (values.description as string) : realm.description,
      settings,
    });
    await addToOutbox(tx, 'users', usersEvents.realmUpdated, toRealmRecord(updated, realmUrlOf(deps, updated)));
    const everyone = await userStore.listActiveIds(tx, realm.id);
    const reply: Record<string, unknown> = {};
    for (const k of changed) {
      await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realm.id, users: everyone, event: realmChangeEvent(k, values[k]) });
      reply[k] = changeReplyValue(values[k]);
    }
    // As Zulip, after the realm event: role:fullmembers follows the new waiting period.
    if (changed.includes('waiting_period_threshold')) {
      await doFullMembersAfterWaitingPeriodChange(tx, realm, realmSettings(realm.settings).waiting_period_threshold, values.waiting_period_threshold as number);
    }
    return reply;
  });
  // Cached actors carry emails the realm's settings shape: every gateway replica re-reads them.
  if (Object.keys(reply).length > 0) {
    await revokeCredentialsOf(deps, { realmIds: [actor.realm_id] });
    // Display emails follow email_address_visibility.
    await presencePeopleChanged(deps, actor.realm_id);
  }
  return reply;
}

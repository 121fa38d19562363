/**
 * PATCH /settings (Zulip's json_settings): the caller's personal settings, full name and
 * password. Each changed setting is one `user_settings` client event (plus its legacy form),
 * and the user's whole settings go out as `userSettingsChanged` for the services acting on
 * them (drafts, typing, presence, the renderer), in the same transaction as the change.
 */
import { eventsInbox, isAdmin, usersEvents, type Actor, type UserSettings } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { hashPassword, verifyPassword } from '../lib/credentials.js';
import { realmSettings } from '@zc/shared/policy';
import { checkSettingValue, settingChangeEvents, settingsOf, USER_SETTING_NAMES } from '../lib/user-settings.js';
import { toUserRecord } from '../lib/user-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore, type UserRow } from '../store/user-store.js';
import { revokeCredentialsOf } from './credential-revocation.js';
import { doPresenceEnabledChanged } from './presence.js';
import { checkFullName } from '../lib/full-name.js';
import { doChangeFullName } from './people-admin.js';

export interface SettingsChange {
  settings: Partial<UserSettings>;
  full_name?: string;
  old_password?: string;
  new_password?: string;
}

const PASSWORD_MIN_LENGTH = 6;
const PASSWORD_MAX_LENGTH = 100;

async function checkChangePassword(deps: UsersDeps, q: Queryable, user: UserRow, change: SettingsChange): Promise<void> {
  if (change.new_password === undefined || change.new_password === '') return;
  if (change.old_password === undefined || change.old_password === '') throw badRequest('Please fill out all fields.');
  if (change.new_password.length > PASSWORD_MAX_LENGTH) throw badRequest('Password is too long.');
  if (change.new_password.length < PASSWORD_MIN_LENGTH) throw badRequest('New password is too weak!');
  if (!(await verifyPassword(change.old_password, user.password_hash))) throw badRequest('Wrong password!');
  await userStore.setPasswordHash(q, user.id, await hashPassword(change.new_password));
}

/** Applies a PATCH /settings request; returns the extra fields of its success reply. */
export async function checkUpdateSettings(deps: UsersDeps, actor: Actor, change: SettingsChange): Promise<Record<string, unknown>> {
  // Syntax was checked at the edge; values are checked here, all before anything is written.
  const requested = USER_SETTING_NAMES.filter((k) => change.settings[k] !== undefined);
  for (const k of requested) checkSettingValue(k, change.settings[k]);
  const fullName = change.full_name === undefined ? undefined : checkFullName(change.full_name);

  let presenceEnabled: boolean | undefined;
  const reply = await transaction(deps.pool, async (tx) => {
    const realm = await realmStore.findById(tx, actor.realm_id);
    let me = await userStore.findByIdForUpdate(tx, actor.realm_id, actor.user_id);
    if (!realm || !me) throw badRequest('Invalid user');
    const reply: Record<string, unknown> = {};

    if (fullName !== undefined && fullName !== me.full_name) {
      // Zulip ignores a name change silently where the realm forbids it: the UI does not offer it.
      if (!realmSettings(realm.settings).name_changes_disabled || isAdmin(me)) {
        me = await doChangeFullName(deps, tx, realm, me, fullName);
        reply.full_name = fullName;
      }
    }
    await checkChangePassword(deps, tx, me, change);

    const before = settingsOf(me.settings, me.timezone);
    const changed = requested.filter((k) => before[k] !== change.settings[k]);
    if (changed.length === 0) return reply;
    const after = { ...before } as Record<string, unknown>;
    for (const k of changed) after[k] = change.settings[k];

    const stored: Record<string, unknown> = {};
    for (const k of changed) if (k !== 'timezone') stored[k] = after[k];
    if (Object.keys(stored).length > 0) await userStore.mergeSettings(tx, me.id, stored);

    const self = [me.id];
    for (const k of changed) {
      for (const event of settingChangeEvents(k, after[k], actor.email)) {
        await addToOutbox(tx, 'users', eventsInbox.notify, { realm_id: realm.id, users: self, event });
      }
    }
    // As Zulip: the user's own events first, then what everyone sees of the user.
    if (changed.includes('timezone')) await announceTimezone(deps, tx, realm, me, after.timezone as string);
    // Zulip deletes the user's drafts when synchronising stops (without drafts events: the
    // clients keep theirs); the drafts service does it, up to this instant.
    const draftsClearedAt = changed.includes('enable_drafts_synchronization') && after.enable_drafts_synchronization === false ? await userStore.markDraftsCleared(tx, me.id) : me.drafts_cleared_at;
    await addToOutbox(tx, 'users', usersEvents.userSettingsChanged, {
      realm_id: realm.id,
      user_id: me.id,
      settings: after as UserSettings,
      changed: changed as string[],
      drafts_cleared_at: draftsClearedAt,
    });
    if (changed.includes('presence_enabled')) presenceEnabled = after.presence_enabled === true;
    return reply;
  });
  // Presence keeps its hot state in Redis: once the change is committed, the user is hidden
  // from (or shown in) every presence answer at once.
  if (presenceEnabled !== undefined) await doPresenceEnabledChanged(deps, actor, presenceEnabled);
  // The gateway's cached actor carries the name: every replica re-reads it before we answer.
  if (reply.full_name !== undefined) await revokeCredentialsOf(deps, { userIds: [actor.user_id] });
  return reply;
}

/** A timezone is part of the user as others see it (Zulip sends realm_user update to everyone). */
async function announceTimezone(deps: UsersDeps, q: Queryable, realm: RealmRow, user: UserRow, timezone: string): Promise<void> {
  await userStore.setTimezone(q, user.id, timezone);
  const record = toUserRecord({ ...user, timezone }, realm, realmHostOf(deps, realm));
  await addToOutbox(q, 'users', usersEvents.userUpdated, record);
  await addToOutbox(q, 'users', eventsInbox.notify, {
    realm_id: realm.id,
    users: await userStore.listActiveIds(q, realm.id),
    event: { type: 'realm_user', op: 'update', person: { user_id: user.id, email: record.email, timezone } },
  });
}

/**
 * PATCH /realm/user_settings_defaults (Zulip's RealmUserDefault): administrators set the
 * settings new users of the realm start with. Each changed setting is one
 * `realm_user_settings_defaults` update event to everyone in the realm.
 */
import { eventsInbox, isAdmin, type Actor, type UserSettings } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { mustBeAdmin } from '../lib/errors.js';
import { checkSettingValue, DEFAULT_USER_SETTINGS, USER_SETTING_NAMES, userSettingsState } from '../lib/user-settings.js';
import { userStore } from '../store/user-store.js';

/** Every personal setting but the timezone, which is the user's own (Zulip's RealmUserDefault fields). */
const DEFAULTABLE = USER_SETTING_NAMES.filter((k) => k !== 'timezone');

async function storedDefaults(q: Queryable, realmId: number, forUpdate = false): Promise<Record<string, unknown>> {
  const { rows } = await q.query<{ d: Record<string, unknown> }>(
    `SELECT user_settings_defaults AS d FROM users.realm WHERE id = $1${forUpdate ? ' FOR UPDATE' : ''}`,
    [realmId],
  );
  if (!rows[0]) throw badRequest('Invalid realm');
  return rows[0].d;
}

/** The realm's defaults as /register shows them: every defaultable setting. */
export async function realmUserSettingsDefaults(q: Queryable, realmId: number): Promise<Record<string, unknown>> {
  const { timezone: _tz, ...all } = userSettingsState({ ...DEFAULT_USER_SETTINGS, ...(await storedDefaults(q, realmId)) } as UserSettings);
  return all;
}

export async function checkUpdateUserSettingsDefaults(deps: UsersDeps, actor: Actor, settings: Partial<UserSettings>): Promise<void> {
  if (!isAdmin(actor)) throw mustBeAdmin();
  const requested = DEFAULTABLE.filter((k) => settings[k] !== undefined);
  for (const k of requested) checkSettingValue(k, settings[k]);
  await transaction(deps.pool, async (tx) => {
    const before = { ...DEFAULT_USER_SETTINGS, ...(await storedDefaults(tx, actor.realm_id, true)) } as Record<string, unknown>;
    const changed = requested.filter((k) => before[k] !== settings[k]);
    if (changed.length === 0) return;
    const patch = Object.fromEntries(changed.map((k) => [k, settings[k]]));
    await tx.query('UPDATE users.realm SET user_settings_defaults = user_settings_defaults || $2::jsonb WHERE id = $1', [actor.realm_id, JSON.stringify(patch)]);
    const everyone = await userStore.listActiveIds(tx, actor.realm_id);
    for (const k of changed) {
      await addToOutbox(tx, 'users', eventsInbox.notify, {
        realm_id: actor.realm_id,
        users: everyone,
        event: { type: 'realm_user_settings_defaults', op: 'update', property: k, value: settings[k] },
      });
    }
  });
}

/** Users' personal settings for the services that act on them (users.userSettings). */
import type { UserSettings } from '@zc/shared/contracts';
import type { UsersDeps } from '../deps.js';
import { settingsOf } from '../lib/user-settings.js';
import { userStore } from '../store/user-store.js';

/** The settings of some users of a realm (unknown ids are left out). */
export async function getUserSettings(deps: UsersDeps, realmId: number, userIds: readonly number[]): Promise<Array<{ user_id: number; settings: UserSettings; drafts_cleared_at: string | null }>> {
  const rows = await userStore.listByIds(deps.pool, realmId, [...new Set(userIds)]);
  return rows.map((u) => ({ user_id: u.id, settings: settingsOf(u.settings, u.timezone), drafts_cleared_at: u.drafts_cleared_at }));
}

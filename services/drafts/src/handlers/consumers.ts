/** The drafts service's durable consumer: the users service's settings changes. */
import type { Bus } from '@zc/shared/bus';
import { usersEvents } from '@zc/shared/contracts';
import { doClearDrafts } from '../actions/sync-setting.js';
import type { DraftsDeps } from '../deps.js';

/** Turning `enable_drafts_synchronization` off deletes the drafts (actions/sync-setting.ts). */
export async function startDraftConsumers(bus: Bus, deps: DraftsDeps): Promise<void> {
  await bus.consume([usersEvents.userSettingsChanged], { durable: 'drafts-user-settings' }, async (_subject, e) => {
    if (e.changed.includes('enable_drafts_synchronization') && e.drafts_cleared_at !== null) await doClearDrafts(deps, e.user_id, e.drafts_cleared_at);
  });
}

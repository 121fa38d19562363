/**
 * Zulip's `enable_drafts_synchronization`: with it off every drafts endpoint is refused
 * (Zulip's draft_endpoint decorator) and /register's `drafts` is empty; turning it off deletes
 * the user's drafts without drafts events (do_change_user_setting: the clients keep their
 * copies, the server stops holding them).
 *
 * The users service owns the setting and is asked on every call, so a PATCH /settings answered
 * a moment ago counts at once (docs/CONVENTIONS.md, read-your-writes). Its answer also says when
 * the drafts were last cleared: drafts stored before that instant are deleted here before
 * anything is read or written, so an off-then-on switch the durable consumer has not caught up
 * with yet never shows drafts Zulip would have deleted.
 */
import { users, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { DraftsDeps } from '../deps.js';

export const draftsSyncDisabled = () => badRequest('User has disabled synchronizing drafts.');

/** Deletes the user's drafts stored up to `clearedAt`, without events (see the file header). */
export async function doClearDrafts(deps: DraftsDeps, userId: number, clearedAt: string): Promise<void> {
  const n = await deps.store.deleteStoredUpTo(deps.pool, userId, clearedAt);
  if (n > 0) deps.log.info({ user_id: userId, drafts: n }, 'drafts cleared: synchronisation turned off');
}

/** Whether the actor synchronises drafts, after clearing what an earlier switch-off deleted. */
export async function draftsSyncEnabled(deps: DraftsDeps, actor: Actor): Promise<boolean> {
  const { users: found } = await deps.bus.request(users.userSettings, { realm_id: actor.realm_id, user_ids: [actor.user_id] });
  const me = found[0];
  if (me?.drafts_cleared_at) await doClearDrafts(deps, actor.user_id, me.drafts_cleared_at);
  // An authenticated actor is always found; Zulip's default is on.
  return me?.settings.enable_drafts_synchronization ?? true;
}

/** Zulip's draft_endpoint: refuses the call when the actor does not synchronise drafts. */
export async function requireDraftsSync(deps: DraftsDeps, actor: Actor): Promise<void> {
  if (!(await draftsSyncEnabled(deps, actor))) throw draftsSyncDisabled();
}

/** Read paths of the drafts service: a user sees only their own drafts. */
import type { Actor, Draft } from '@zc/shared/contracts';
import { readWithSnapshot } from '@zc/shared/db';
import type { DraftsDeps } from '../deps.js';
import { draftsSyncEnabled, requireDraftsSync } from '../actions/sync-setting.js';
import { toApiDraft } from '../lib/draft-rules.js';

/** GET /drafts: most recently edited first. */
export async function listDrafts(deps: DraftsDeps, actor: Actor): Promise<Draft[]> {
  await requireDraftsSync(deps, actor);
  return (await deps.store.listForUser(deps.pool, actor.user_id)).map(toApiDraft);
}

/**
 * /register's `drafts` (empty when the user does not synchronise drafts, as Zulip's), read in
 * one snapshot so the events service can drop what it already holds.
 */
export async function getRegisterState(deps: DraftsDeps, actor: Actor, fetch: readonly string[]): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const synced = fetch.includes('drafts') && (await draftsSyncEnabled(deps, actor));
  const { snapshot, result } = await readWithSnapshot(deps.pool, async (q) => {
    if (!fetch.includes('drafts')) return {};
    if (!synced) return { drafts: [] };
    return { drafts: (await deps.store.listForUser(q, actor.user_id)).map(toApiDraft) };
  });
  return { snapshot, state: result };
}

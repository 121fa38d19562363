/** Read paths of the drafts service: a user sees only their own drafts. */
import type { Actor, Draft } from '@zc/shared/contracts';
import { readWithSnapshot } from '@zc/shared/db';
import type { DraftsDeps } from '../deps.js';
import { toApiDraft } from '../lib/draft-rules.js';

/** GET /drafts: most recently edited first. */
export async function listDrafts(deps: DraftsDeps, actor: Actor): Promise<Draft[]> {
  return (await deps.store.listForUser(deps.pool, actor.user_id)).map(toApiDraft);
}

/** /register's `drafts`, read in one snapshot so the events service can drop what it already holds. */
export async function getRegisterState(deps: DraftsDeps, actor: Actor, fetch: readonly string[]): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const { snapshot, result } = await readWithSnapshot(deps.pool, async (q) => {
    if (!fetch.includes('drafts')) return {};
    return { drafts: (await deps.store.listForUser(q, actor.user_id)).map(toApiDraft) };
  });
  return { snapshot, state: result };
}

/**
 * Creating, editing and deleting drafts. Each change and its `drafts` client event (to the
 * owner's own queues only, api-notes §2.3) are written in one transaction through the outbox.
 */
import { eventsInbox, type Actor, type DraftInput } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { AppError } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { DraftsDeps } from '../deps.js';
import { normaliseDraft, toApiDraft } from '../lib/draft-rules.js';
import { assertRecipientsValid } from './recipients.js';
import { requireDraftsSync } from './sync-setting.js';

/** Spec section 7: an unknown draft is an error without a code (STYLE decision 1); 404 as Zulip. */
export const draftDoesNotExist = () => new AppError(null, 'Draft does not exist', 404);

function notifyOwner(q: Queryable, actor: Actor, event: Record<string, unknown>): Promise<void> {
  return addToOutbox(q, 'drafts', eventsInbox.notify, { realm_id: actor.realm_id, users: [actor.user_id], event });
}

/** POST /drafts: stores every draft or none; returns their ids in the order given. */
export async function doCreateDrafts(deps: DraftsDeps, actor: Actor, input: readonly DraftInput[]): Promise<number[]> {
  await requireDraftsSync(deps, actor);
  const now = deps.now();
  const drafts = input.map((d) => normaliseDraft(d, now, actor.user_id));
  await assertRecipientsValid(deps, actor, drafts);
  if (drafts.length === 0) return [];
  return transaction(deps.pool, async (tx) => {
    const rows = await deps.store.insertMany(tx, actor, drafts);
    await notifyOwner(tx, actor, { type: 'drafts', op: 'add', drafts: rows.map(toApiDraft) });
    return rows.map((r) => r.id);
  });
}

/** PATCH /drafts/{id}: replaces the draft (a missing timestamp becomes now). */
export async function doEditDraft(deps: DraftsDeps, actor: Actor, draftId: number, input: DraftInput): Promise<void> {
  await requireDraftsSync(deps, actor);
  if (!(await deps.store.findOwned(deps.pool, actor.user_id, draftId))) throw draftDoesNotExist();
  const draft = normaliseDraft(input, deps.now(), actor.user_id);
  await assertRecipientsValid(deps, actor, [draft]);
  await transaction(deps.pool, async (tx) => {
    const row = await deps.store.replaceOwned(tx, actor.user_id, draftId, draft);
    // Deleted by another client since the check above.
    if (!row) throw draftDoesNotExist();
    await notifyOwner(tx, actor, { type: 'drafts', op: 'update', draft: toApiDraft(row) });
  });
}

/** DELETE /drafts/{id}. */
export async function doDeleteDraft(deps: DraftsDeps, actor: Actor, draftId: number): Promise<void> {
  await requireDraftsSync(deps, actor);
  await transaction(deps.pool, async (tx) => {
    if (!(await deps.store.deleteOwned(tx, actor.user_id, draftId))) throw draftDoesNotExist();
    await notifyOwner(tx, actor, { type: 'drafts', op: 'remove', draft_id: draftId });
  });
}

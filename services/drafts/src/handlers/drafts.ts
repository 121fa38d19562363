/** Bus adapters of the drafts service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { drafts, registerStateReply } from '@zc/shared/contracts';
import { doCreateDrafts, doDeleteDraft, doEditDraft } from '../actions/drafts.js';
import type { DraftsDeps } from '../deps.js';
import { getRegisterState, listDrafts } from '../queries/drafts.js';

export function registerDraftHandlers(bus: Bus, deps: DraftsDeps): void {
  bus.serve(drafts.list, async (r) => {
    const list = await listDrafts(deps, r.actor);
    return { count: list.length, drafts: list };
  });
  bus.serve(drafts.create, async (r) => ({ ids: await doCreateDrafts(deps, r.actor, r.drafts) }));
  bus.serve(drafts.edit, async (r) => {
    await doEditDraft(deps, r.actor, r.draft_id, r.draft);
    return {};
  });
  bus.serve(drafts.remove, async (r) => {
    await doDeleteDraft(deps, r.actor, r.draft_id);
    return {};
  });
  bus.serve(drafts.registerState, async (r) => {
    const { snapshot, state } = await getRegisterState(deps, r.actor, r.fetch);
    return registerStateReply(snapshot, state);
  });
}

import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { DraftInput, drafts } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, json } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const draftId = int({ min: 1 });

/** /api/v1/drafts (spec 4.10; listing per api-notes §2.4) and /api/v1/drafts/{draft_id} (spec 4.11). */
export default async function draftsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    params(request, {});
    return success(await bus.request(drafts.list, { actor: request.actor }));
  });

  app.post('/', async (request) => {
    const p = params(request, { drafts: json(Type.Array(DraftInput)).optional([]) });
    return success(await bus.request(drafts.create, { actor: request.actor, drafts: p.drafts }));
  });

  app.patch<{ Params: { draft_id: string } }>('/:draft_id', async (request) => {
    const p = params(request, { draft: json(DraftInput) });
    const id = draftId.decode(request.params.draft_id, 'draft_id');
    return success(await bus.request(drafts.edit, { actor: request.actor, draft_id: id, draft: p.draft }));
  });

  app.delete<{ Params: { draft_id: string } }>('/:draft_id', async (request) => {
    params(request, {});
    const id = draftId.decode(request.params.draft_id, 'draft_id');
    return success(await bus.request(drafts.remove, { actor: request.actor, draft_id: id }));
  });
}

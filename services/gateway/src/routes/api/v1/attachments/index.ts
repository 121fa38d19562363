import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { params } from '../../../../plugins/params.js';

/** /api/v1/attachments: the caller's uploads, and DELETE /attachments/{attachment_id} (spec 4.20). */
export default async function attachmentsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    params(request, {});
    return success(await bus.request(uploads.listAttachments, { actor: request.actor }));
  });

  app.delete<{ Params: { attachment_id: string } }>('/:attachment_id', async (request) => {
    params(request, {});
    const raw = request.params.attachment_id;
    // Spec 4.20: any id that names no attachment of the caller's is "Invalid attachment".
    if (!/^\d{1,15}$/.test(raw)) throw badRequest('Invalid attachment');
    return success(await bus.request(uploads.removeAttachment, { actor: request.actor, attachment_id: Number(raw) }));
  });
}

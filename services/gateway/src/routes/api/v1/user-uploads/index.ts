import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { forwardUpload, leaveMultipartUnread } from '../../../../lib/file-streams.js';

/**
 * /api/v1/user_uploads: POST uploads one file (multipart, any field name; Zulip's `uri`
 * answer); GET .../{realm_id}/{path} answers a temporary URL for the file (Zulip's
 * get_file_temporary_url_backend). The multipart body is not parsed here: it is streamed as
 * it comes to an uploads replica, which parses it as it arrives.
 */
export default async function userUploadsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  leaveMultipartUnread(app);

  app.post('/', async (request, reply) => {
    if (!/^multipart\/form-data\b/i.test(request.headers['content-type'] ?? '')) throw badRequest('You must specify a file to upload');
    const declared = Number(request.headers['content-length']);
    const target = await bus.request(uploads.beginUpload, {
      actor: request.actor,
      content_length: Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
    });
    return forwardUpload(request, reply, target.url);
  });

  app.get<{ Params: { realm_id: string; '*': string } }>('/:realm_id/*', async (request) => {
    const realmId = /^\d{1,15}$/.test(request.params.realm_id) ? Number(request.params.realm_id) : -1;
    const pathId = `${request.params.realm_id}/${request.params['*']}`;
    return success(await bus.request(uploads.temporaryUrl, { actor: request.actor, realm_id: realmId, path_id: pathId }));
  });
}

import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { serveFileTarget as serve } from '../../lib/file-streams.js';

/**
 * /user_uploads/{realm_id}/{path} (outside /api/v1, as the `uri` of an upload names it):
 * the file itself, to whoever may see it (the uploads service decides); and
 * /user_uploads/temporary/{token}/{filename}, the signed form that needs no credentials.
 */
export default async function fileDownloadRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get<{ Params: { token: string; filename: string } }>('/temporary/:token/:filename', { config: { auth: false } }, async (request, reply) =>
    serve(reply, await bus.request(uploads.openTemporary, { token: request.params.token, filename: request.params.filename })),
  );

  app.get<{ Params: { realm_id: string; '*': string } }>('/:realm_id/*', async (request, reply) => {
    const realmId = /^\d{1,15}$/.test(request.params.realm_id) ? Number(request.params.realm_id) : -1;
    const pathId = `${request.params.realm_id}/${request.params['*']}`;
    return serve(reply, await bus.request(uploads.openFile, { actor: request.actor, realm_id: realmId, path_id: pathId }));
  });
}

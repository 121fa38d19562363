import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { serveFileTarget as serve } from '../../lib/file-streams.js';

/** The realm id of a download path; anything but digits is no realm (the file is then "not found"). */
const realmIdOf = (segment: string) => (/^\d{1,15}$/.test(segment) ? Number(segment) : -1);

/**
 * /user_uploads/{realm_id}/{path} (outside /api/v1, as the `uri` of an upload names it):
 * the file itself, to whoever may see it (the uploads service decides); and
 * /user_uploads/temporary/{token}/{filename}, the signed form that needs no credentials; and
 * /user_uploads/thumbnail/{realm_id}/{path}/{format}, an image's thumbnail, under its file's rules.
 */
export default async function fileDownloadRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get<{ Params: { token: string; filename: string } }>('/temporary/:token/:filename', { config: { auth: false } }, async (request, reply) =>
    serve(reply, await bus.request(uploads.openTemporary, { token: request.params.token, filename: request.params.filename })),
  );

  app.get<{ Params: { realm_id: string; '*': string } }>('/thumbnail/:realm_id/*', async (request, reply) => {
    const rest = request.params['*'];
    const cut = rest.lastIndexOf('/');
    const pathId = `${request.params.realm_id}/${rest.slice(0, Math.max(cut, 0))}`;
    const format = cut < 0 ? '' : rest.slice(cut + 1);
    return serve(reply, await bus.request(uploads.openThumbnail, { actor: request.actor, realm_id: realmIdOf(request.params.realm_id), path_id: pathId, format }));
  });

  app.get<{ Params: { realm_id: string; '*': string } }>('/:realm_id/*', async (request, reply) => {
    const pathId = `${request.params.realm_id}/${request.params['*']}`;
    return serve(reply, await bus.request(uploads.openFile, { actor: request.actor, realm_id: realmIdOf(request.params.realm_id), path_id: pathId }));
  });
}

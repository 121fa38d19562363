import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { serveFileTarget } from '../../lib/file-streams.js';

/**
 * /user_avatars/{realm_id}/emoji/images/{file}: custom emoji images, public as Zulip serves
 * them (an <img> in a message or a notification carries no credentials). The uploads service
 * answers only an existing emoji's own file names.
 */
export default async function userAvatarsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.get<{ Params: { realm_id: string; '*': string } }>('/:realm_id/emoji/images/*', { config: { auth: false } }, async (request, reply) => {
    const realmId = /^\d{1,15}$/.test(request.params.realm_id) ? Number(request.params.realm_id) : -1;
    return serveFileTarget(reply, await bus.request(uploads.openEmojiImage, { realm_id: realmId, file: request.params['*'] }));
  });
}

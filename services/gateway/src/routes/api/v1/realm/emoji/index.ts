import type { FastifyInstance } from 'fastify';
import { uploads } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { forwardUpload, leaveMultipartUnread } from '../../../../../lib/file-streams.js';

/**
 * /api/v1/realm/emoji: GET lists the realm's custom emoji; POST .../{emoji_name} uploads one
 * (multipart, any field name, streamed to an uploads replica as it arrives); DELETE
 * .../{emoji_name} deactivates one. The uploads service owns emoji and decides every rule.
 */
export default async function realmEmojiRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  leaveMultipartUnread(app);

  app.get('/', async (request) => success(await bus.request(uploads.listEmoji, { actor: request.actor })));

  app.post<{ Params: { emoji_name: string } }>('/:emoji_name', async (request, reply) => {
    const declared = Number(request.headers['content-length']);
    const target = await bus.request(uploads.beginEmojiUpload, {
      actor: request.actor,
      emoji_name: request.params.emoji_name,
      content_length: Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
      multipart: /^multipart\/form-data\b/i.test(request.headers['content-type'] ?? ''),
    });
    return forwardUpload(request, reply, target.url);
  });

  app.delete<{ Params: { emoji_name: string } }>('/:emoji_name', async (request) => {
    await bus.request(uploads.deactivateEmoji, { actor: request.actor, emoji_name: request.params.emoji_name });
    return success();
  });
}

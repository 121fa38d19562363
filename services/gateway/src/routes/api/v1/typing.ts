import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { custom, decodeJsonField, int, oneOf, str } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/**
 * `to`: a JSON list of user ids (or, from old clients, emails); zulip-js sends a single
 * recipient bare, not as a list. For streams before feature level 215, the stream's id.
 */
const recipients = custom<number[] | string[]>((raw, name) => {
  const v = decodeJsonField(raw, name);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) return v as number[];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  if (typeof v === 'string' && v !== '') return [v];
  throw badRequest(`${name} is not a list of user ids`);
});

/** POST /api/v1/typing: typing start/stop for a direct message or a stream topic. */
export default async function typingRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, {
      type: oneOf(['private', 'direct', 'stream', 'channel']).optional('private'),
      op: oneOf(['start', 'stop']),
      to: recipients.optional(),
      stream_id: int().optional(),
      topic: str().optional(),
    });
    const type = p.type === 'stream' || p.type === 'channel' ? 'stream' : 'private';
    await app.deps.bus.request(messagesRpc.typing, { actor: request.actor, ...p, type });
    return success();
  });
}

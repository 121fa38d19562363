import type { FastifyInstance } from 'fastify';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, str } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** POST /api/v1/submessage: a poll vote, option or todo task on a widget message (Zulip's process_submessage). */
export default async function submessageRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { message_id: int(), msg_type: str(), content: str() });
    await app.deps.bus.request(messagesRpc.addSubmessage, { actor: request.actor, ...p });
    return success({});
  });
}

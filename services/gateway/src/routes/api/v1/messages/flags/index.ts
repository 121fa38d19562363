import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json, str } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

/** POST /api/v1/messages/flags (spec 4.17). */
export default async function messageFlagsRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { messages: json(Type.Array(Type.Integer())), op: str(), flag: str() });
    return success(await app.deps.bus.request(messagesRpc.updateFlags, { actor: request.actor, ...p }));
  });
}

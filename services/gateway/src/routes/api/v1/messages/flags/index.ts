import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int, json, str } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';
import { anchor, jsonList } from '../index.js';

/** POST /api/v1/messages/flags (spec 4.17) and /messages/flags/narrow (feature level 155). */
export default async function messageFlagsRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { messages: json(Type.Array(Type.Integer())), op: str(), flag: str() });
    return success(await app.deps.bus.request(messagesRpc.updateFlags, { actor: request.actor, ...p }));
  });

  app.post('/narrow', async (request) => {
    const p = params(request, {
      anchor: anchor(),
      include_anchor: bool().optional(true),
      num_before: int({ min: 0 }),
      num_after: int({ min: 0 }),
      narrow: jsonList(),
      op: str(),
      flag: str(),
    });
    return success(await app.deps.bus.request(messagesRpc.updateFlagsForNarrow, { actor: request.actor, ...p }));
  });
}

import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { messagesRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { custom, decodeJsonField, json } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

/** GET /api/v1/messages/matches_narrow (spec 4.7). */
export default async function matchesNarrowRoutes(app: FastifyInstance) {
  app.get('/', async (request) => {
    const p = params(request, {
      msg_ids: json(Type.Array(Type.Integer())),
      narrow: custom((raw, name) => decodeJsonField(raw, name)),
    });
    return success(await app.deps.bus.request(messagesRpc.matchesNarrow, { actor: request.actor, ...p }));
  });
}

import type { FastifyInstance } from 'fastify';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { str } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** GET /api/v1/get_stream_id?stream=NAME (zulip-js uses it). */
export default async function getStreamIdRoutes(app: FastifyInstance) {
  app.get('/', async (request) => {
    const p = params(request, { stream: str() });
    return success(await app.deps.bus.request(subscriptionsRpc.getStreamId, { actor: request.actor, stream: p.stream }));
  });
}

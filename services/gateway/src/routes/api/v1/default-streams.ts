import type { FastifyInstance } from 'fastify';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** POST and DELETE /api/v1/default_streams: the streams every new user of the realm joins. */
export default async function defaultStreamsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.post('/', async (request) => {
    const p = params(request, { stream_id: int() });
    return success(await bus.request(subscriptionsRpc.addDefaultStream, { actor: request.actor, stream_id: p.stream_id }));
  });
  app.delete('/', async (request) => {
    const p = params(request, { stream_id: int() });
    return success(await bus.request(subscriptionsRpc.removeDefaultStream, { actor: request.actor, stream_id: p.stream_id }));
  });
}

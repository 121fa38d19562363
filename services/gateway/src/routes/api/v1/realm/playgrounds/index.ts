import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, str } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

/** /api/v1/realm/playgrounds: add and remove code playgrounds (FL 49; `url_prefix` until FL 196). */
export default async function realmPlaygroundsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.post('/', async (request) => {
    const p = params(request, { name: str(), pygments_language: str(), url_prefix: str() });
    return success(await bus.request(users.addPlayground, { actor: request.actor, ...p }));
  });
  app.delete<{ Params: { playground_id: string } }>('/:playground_id', async (request) => {
    params(request, {});
    const id = int({ min: 0 }).decode(request.params.playground_id, 'playground_id');
    await bus.request(users.removePlayground, { actor: request.actor, id });
    return success();
  });
}

import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

/** /api/v1/realm/linkifiers: the ordered list, and reordering it. */
export default async function realmLinkifiersRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.get('/', async (request) => {
    params(request, {});
    const { linkifiers } = await bus.request(users.listLinkifiers, { realm_id: request.actor.realm_id });
    return success({ linkifiers });
  });
  app.patch('/', async (request) => {
    const p = params(request, { ordered_linkifier_ids: json(Type.Array(Type.Integer())) });
    await bus.request(users.reorderLinkifiers, { actor: request.actor, ...p });
    return success();
  });
}

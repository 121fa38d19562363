import type { FastifyInstance } from 'fastify';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, str } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

const linkifierParams = { pattern: str(), url_template: str().optional(), url_format_string: str().optional() };

/** /api/v1/realm/filters: create, update (spec 4.18) and delete linkifiers; the legacy GET list. */
export default async function realmFiltersRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const filterId = (raw: string) => int({ min: 1 }).decode(raw, 'filter_id');

  app.get('/', async (request) => {
    params(request, {});
    // The pre-FL-54 listing (zulip-js still calls it): [pattern, url_format, id] tuples.
    const { filters } = await bus.request(users.listLinkifiers, { realm_id: request.actor.realm_id });
    return success({ filters });
  });

  app.post('/', async (request) => {
    const p = params(request, linkifierParams);
    return success(await bus.request(users.addLinkifier, { actor: request.actor, ...p }));
  });

  app.patch<{ Params: { filter_id: string } }>('/:filter_id', async (request) => {
    const p = params(request, linkifierParams);
    await bus.request(users.updateLinkifier, { actor: request.actor, id: filterId(request.params.filter_id), ...p });
    return success();
  });

  app.delete<{ Params: { filter_id: string } }>('/:filter_id', async (request) => {
    params(request, {});
    await bus.request(users.removeLinkifier, { actor: request.actor, id: filterId(request.params.filter_id) });
    return success();
  });
}

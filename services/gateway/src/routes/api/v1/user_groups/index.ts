import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { userGroups } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int, json, str } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const ids = () => json(Type.Array(Type.Integer()));

/** /api/v1/user_groups (spec 4.19 and Zulip's user group endpoints at feature level 155). */
export default async function userGroupsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const groupId = (raw: string) => int({ min: 1 }).decode(raw, 'user_group_id');

  app.get('/', async (request) => {
    params(request, {});
    return success(await bus.request(userGroups.list, { actor: request.actor }));
  });

  app.post('/create', async (request) => {
    const p = params(request, { name: str(), description: str(), members: ids(), subgroups: ids().optional([]) });
    return success(await bus.request(userGroups.create, { actor: request.actor, ...p }));
  });

  app.patch<{ Params: { id: string } }>('/:id', async (request) => {
    const p = params(request, { name: str().optional(), description: str().optional() });
    await bus.request(userGroups.update, { actor: request.actor, group_id: groupId(request.params.id), ...p });
    return success();
  });

  app.delete<{ Params: { id: string } }>('/:id', async (request) => {
    params(request, {});
    await bus.request(userGroups.remove, { actor: request.actor, group_id: groupId(request.params.id) });
    return success();
  });

  app.post<{ Params: { id: string } }>('/:id/members', async (request) => {
    const p = params(request, { add: ids().optional([]), delete: ids().optional([]) });
    await bus.request(userGroups.updateMembers, { actor: request.actor, group_id: groupId(request.params.id), ...p });
    return success();
  });

  app.get<{ Params: { id: string } }>('/:id/members', async (request) => {
    const p = params(request, { direct_member_only: bool().optional(false) });
    return success(await bus.request(userGroups.members, { actor: request.actor, group_id: groupId(request.params.id), ...p }));
  });

  app.get<{ Params: { id: string; user_id: string } }>('/:id/members/:user_id', async (request) => {
    const p = params(request, { direct_member_only: bool().optional(false) });
    const userId = int({ min: 1 }).decode(request.params.user_id, 'user_id');
    return success(await bus.request(userGroups.isMember, { actor: request.actor, group_id: groupId(request.params.id), user_id: userId, ...p }));
  });

  app.post<{ Params: { id: string } }>('/:id/subgroups', async (request) => {
    const p = params(request, { add: ids().optional([]), delete: ids().optional([]) });
    await bus.request(userGroups.updateSubgroups, { actor: request.actor, group_id: groupId(request.params.id), ...p });
    return success();
  });

  app.get<{ Params: { id: string } }>('/:id/subgroups', async (request) => {
    const p = params(request, { direct_subgroup_only: bool().optional(false) });
    return success(await bus.request(userGroups.subgroups, { actor: request.actor, group_id: groupId(request.params.id), ...p }));
  });
}

import type { FastifyInstance } from 'fastify';
import { ProfileDataEntry, Role, users } from '@zc/shared/contracts';
import { AppError } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { bool, custom, int, json, str } from '@zc/shared/params';
import { Type } from '@sinclair/typebox';
import { params } from '../../../../plugins/params.js';

const viewParams = { client_gravatar: bool().optional(true), include_custom_profile_fields: bool().optional(false) };

const ROLES: readonly number[] = Object.values(Role);

/** Zulip's check_int_in(ROLE_TYPES). */
const role = custom((raw, name) => {
  const v = int().decode(raw, name);
  if (!ROLES.includes(v)) throw new AppError('BAD_REQUEST', `Invalid ${name}`, 400, { var_name: name });
  return v;
});

const userIdOf = (request: { params: { user_id: string } }) => int({ min: 1 }).decode(request.params.user_id, 'user_id');

/**
 * /api/v1/users (spec 4.15, 4.16), /api/v1/users/{user_id|email} (spec 4.23), and the
 * administrators' PATCH /users/{user_id} and POST /users/{user_id}/reactivate.
 */
export default async function usersRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    const p = params(request, viewParams);
    return success(await bus.request(users.list, { actor: request.actor, ...p }));
  });

  app.post('/', async (request) => {
    const p = params(request, { email: str(), password: str(), full_name: str() });
    return success(await bus.request(users.create, { actor: request.actor, ...p }));
  });

  app.delete<{ Params: { user_id: string } }>('/:user_id', async (request) => {
    params(request, {});
    await bus.request(users.deactivate, { actor: request.actor, user_id: userIdOf(request) });
    return success();
  });

  app.patch<{ Params: { user_id: string } }>('/:user_id', async (request) => {
    const p = params(request, {
      full_name: str().optional(),
      role: role.optional(),
      profile_data: json(Type.Array(ProfileDataEntry)).optional(),
    });
    await bus.request(users.updateUser, { actor: request.actor, user_id: userIdOf(request), ...p });
    return success();
  });

  app.post<{ Params: { user_id: string } }>('/:user_id/reactivate', async (request) => {
    params(request, {});
    await bus.request(users.reactivate, { actor: request.actor, user_id: userIdOf(request) });
    return success();
  });

  app.get<{ Params: { who: string } }>('/:who', async (request) => {
    const p = params(request, viewParams);
    const who = request.params.who;
    const by = /^\d+$/.test(who) ? { user_id: Number(who) } : { email: who };
    return success(await bus.request(users.get, { actor: request.actor, ...by, ...p }));
  });
}


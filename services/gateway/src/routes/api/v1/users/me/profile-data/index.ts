import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

/** Zulip's check_dict_only([id, value]) for PATCH: text, or a person picker's user ids. */
const ownEntry = Type.Object(
  { id: Type.Integer(), value: Type.Union([Type.String(), Type.Array(Type.Integer())]) },
  { additionalProperties: false },
);

/** /api/v1/users/me/profile_data: the caller's own custom profile values. */
export default async function profileDataRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.patch('/', async (request) => {
    const p = params(request, { data: json(Type.Array(ownEntry)) });
    await bus.request(users.updateOwnProfileData, { actor: request.actor, ...p });
    return success();
  });

  app.delete('/', async (request) => {
    const p = params(request, { data: json(Type.Array(Type.Integer())) });
    await bus.request(users.removeOwnProfileData, { actor: request.actor, ...p });
    return success();
  });
}

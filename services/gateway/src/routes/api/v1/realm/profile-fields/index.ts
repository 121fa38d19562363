import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int, json, str } from '@zc/shared/params';
import { params } from '../../../../../plugins/params.js';

const fieldData = json(Type.Record(Type.String(), Type.Unknown()), 'field_data is not a dict');

/**
 * /api/v1/realm/profile_fields: the realm's custom profile fields; creating, changing,
 * deleting and reordering them is for administrators (the users service checks).
 */
export default async function realmProfileFieldsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const fieldId = (raw: string) => int({ min: 1 }).decode(raw, 'field_id');

  app.get('/', async (request) => {
    params(request, {});
    return success(await bus.request(users.listProfileFields, { actor: request.actor }));
  });

  app.post('/', async (request) => {
    const p = params(request, {
      name: str().optional(''),
      hint: str().optional(''),
      field_type: int(),
      field_data: fieldData.optional({}),
      display_in_profile_summary: bool().optional(false),
      required: bool().optional(false),
      editable_by_user: bool().optional(true),
    });
    return success(await bus.request(users.createProfileField, { actor: request.actor, ...p }));
  });

  app.patch('/', async (request) => {
    const p = params(request, { order: json(Type.Array(Type.Integer())) });
    await bus.request(users.reorderProfileFields, { actor: request.actor, ...p });
    return success();
  });

  app.patch<{ Params: { field_id: string } }>('/:field_id', async (request) => {
    const p = params(request, {
      name: str().optional(),
      hint: str().optional(),
      field_data: fieldData.optional(),
      display_in_profile_summary: bool().optional(),
      required: bool().optional(),
      editable_by_user: bool().optional(),
    });
    await bus.request(users.updateProfileField, { actor: request.actor, id: fieldId(request.params.field_id), ...p });
    return success();
  });

  app.delete<{ Params: { field_id: string } }>('/:field_id', async (request) => {
    params(request, {});
    await bus.request(users.removeProfileField, { actor: request.actor, id: fieldId(request.params.field_id) });
    return success();
  });
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UserSettings, users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { str } from '@zc/shared/params';
import { params, scalarParams } from '../../../../plugins/params.js';

const settingParams = scalarParams(UserSettings);

/**
 * /api/v1/settings: PATCH the caller's settings, full name and password. The legacy
 * /settings/display and /settings/notifications take the same parameters (Zulip routes all
 * three to one view since FL 80).
 */
export default async function settingsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const update = async (request: FastifyRequest) => {
    const { full_name, old_password, new_password, ...settings } = params(request, {
      ...settingParams,
      full_name: str().optional(),
      old_password: str().optional(),
      new_password: str().optional(),
    });
    return success(await bus.request(users.updateSettings, { actor: request.actor, settings, full_name, old_password, new_password }));
  };
  app.patch('/', update);
  app.patch('/display', update);
  app.patch('/notifications', update);
}

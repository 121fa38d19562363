import type { FastifyInstance } from 'fastify';
import { UserSettings, users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { params, scalarParams } from '../../../../../plugins/params.js';

const { timezone: _timezone, ...defaultable } = scalarParams(UserSettings);

/** /api/v1/realm/user_settings_defaults: the settings new users of the realm start with (administrators). */
export default async function realmUserSettingsDefaultsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.patch('/', async (request) => {
    const settings = params(request, defaultable);
    await bus.request(users.updateUserSettingsDefaults, { actor: request.actor, settings });
    return success();
  });
}

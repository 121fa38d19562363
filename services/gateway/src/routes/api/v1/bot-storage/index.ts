import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

const keys = json(Type.Array(Type.String())).optional();

/** /api/v1/bot_storage: the caller's key/value storage (meant for bots; python-zulip-api's get_storage/update_storage). */
export default async function botStorageRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    const p = params(request, { keys });
    return success(await bus.request(users.getBotStorage, { actor: request.actor, ...p }));
  });

  app.put('/', async (request) => {
    const p = params(request, { storage: json(Type.Record(Type.String(), Type.String())) });
    await bus.request(users.updateBotStorage, { actor: request.actor, ...p });
    return success();
  });

  app.delete('/', async (request) => {
    const p = params(request, { keys });
    await bus.request(users.removeBotStorage, { actor: request.actor, ...p });
    return success();
  });
}

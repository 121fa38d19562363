import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

const words = { alert_words: json(Type.Array(Type.String())) };

/** /api/v1/users/me/alert_words: list, add and remove the caller's alert words. */
export default async function alertWordsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  app.get('/', async (request) => {
    params(request, {});
    return success(await bus.request(users.listAlertWords, { actor: request.actor }));
  });
  app.post('/', async (request) => {
    const p = params(request, words);
    return success(await bus.request(users.addAlertWords, { actor: request.actor, ...p }));
  });
  app.delete('/', async (request) => {
    const p = params(request, words);
    return success(await bus.request(users.removeAlertWords, { actor: request.actor, ...p }));
  });
}

import type { FastifyInstance } from 'fastify';
import { subdomainOfHost } from '@zc/shared/config';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { str } from '@zc/shared/params';
import { params } from '../../../plugins/params.js';

/** POST /api/v1/fetch_api_key (spec 4.8). */
export default async function fetchApiKeyRoutes(app: FastifyInstance) {
  app.post('/', { config: { auth: false } }, async (request) => {
    const p = params(request, { username: str(), password: str() });
    const reply = await app.deps.bus.request(users.fetchApiKey, {
      realm_subdomain: subdomainOfHost(app.deps.config, request.headers.host),
      username: p.username,
      password: p.password,
    });
    return success(reply);
  });
}

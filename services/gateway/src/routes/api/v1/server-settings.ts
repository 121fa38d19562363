import type { FastifyInstance } from 'fastify';
import { subdomainOfHost } from '@zc/shared/config';
import { users } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';

/** GET /api/v1/server_settings (spec 4.24): no authentication; an Authorization header is not rejected. */
export default async function serverSettingsRoutes(app: FastifyInstance) {
  app.get('/', { config: { auth: false } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const settings = await app.deps.bus.request(users.serverSettings, {
      realm_subdomain: subdomainOfHost(app.deps.config, request.headers.host),
      client_name: request.clientName,
    });
    return success(settings);
  });
}

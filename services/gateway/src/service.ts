/** The gateway as a service: Fastify on the public port, the shared admin port beside it. */
import type { ServiceDefinition } from '@zc/shared/service';
import { buildApp } from './app.js';
import { loadGatewayConfig, type GatewayConfig } from './deps.js';

export function gatewayService(overrides: Partial<GatewayConfig> = {}): ServiceDefinition & { port(): number } {
  let port = 0;
  return {
    name: 'gateway',
    usesRedis: true,
    port: () => port,
    async start(ctx) {
      const gateway = { ...loadGatewayConfig(), ...overrides };
      const app = await buildApp({ bus: ctx.bus, redis: ctx.redis, config: ctx.config, gateway, log: ctx.log, metrics: ctx.metrics });
      await app.listen({ port: gateway.port, host: gateway.host });
      port = (app.server.address() as { port: number }).port;
      ctx.log.info({ port }, 'gateway listening');
      return { stop: () => app.close() };
    },
  };
}

import type { Bus } from '@zc/shared/bus';
import type { SharedConfig } from '@zc/shared/config';
import type { Logger } from '@zc/shared/logging';
import type { Redis } from '@zc/shared/redis';

export interface GatewayConfig {
  port: number;
  host: string;
  /** Requests per user per minute; 0 switches rate limiting off (load tests). */
  rateLimitPerMinute: number;
  /** Unauthenticated requests per IP per minute; 0 switches it off. */
  rateLimitPerIpPerMinute: number;
  /** How long a checked API key is trusted without asking the users service. */
  authCacheTtlMs: number;
}

export function loadGatewayConfig(env = process.env): GatewayConfig {
  const n = (name: string, d: number) => (env[name] === undefined || env[name] === '' ? d : Number(env[name]));
  return {
    port: n('ZC_GATEWAY_PORT', 9991),
    host: env.ZC_GATEWAY_HOST ?? '0.0.0.0',
    rateLimitPerMinute: n('ZC_RATE_LIMIT_PER_MINUTE', 200),
    rateLimitPerIpPerMinute: n('ZC_RATE_LIMIT_PER_IP_PER_MINUTE', 100),
    authCacheTtlMs: n('ZC_AUTH_CACHE_TTL_MS', 30_000),
  };
}

export interface GatewayDeps {
  bus: Bus;
  redis: Redis;
  config: SharedConfig;
  gateway: GatewayConfig;
  log: Logger;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: GatewayDeps;
  }
}

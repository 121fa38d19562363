import type { Bus } from '@zc/shared/bus';
import type { SharedConfig } from '@zc/shared/config';
import type { Logger } from '@zc/shared/logging';
import type { Redis } from '@zc/shared/redis';

export interface GatewayConfig {
  port: number;
  host: string;
  /** Requests per user in any rolling minute; 0 switches rate limiting off (load tests). */
  rateLimitPerMinute: number;
  /** Unauthenticated requests per client address in any rolling minute; 0 switches it off. */
  rateLimitPerIpPerMinute: number;
  /**
   * Failed authentications (bad or malformed API key, bad Basic header) per client address in
   * any rolling minute; past it the address gets 429 without its credentials being checked.
   * 0 switches it off.
   */
  authFailuresPerIpPerMinute: number;
  /** How long a checked API key is trusted without asking the users service. */
  authCacheTtlMs: number;
  /**
   * Whom to believe about the client's address in X-Forwarded-For: `false` (nobody, the
   * default: anyone could spoof the per-IP limit), `true`, a hop count or a list of proxy
   * addresses/CIDRs (Fastify's trustProxy).
   */
  trustProxy: boolean | string | ((address: string, hop: number) => boolean);
}

export function loadGatewayConfig(env = process.env): GatewayConfig {
  const n = (name: string, d: number) => (env[name] === undefined || env[name] === '' ? d : Number(env[name]));
  return {
    port: n('ZC_GATEWAY_PORT', 9991),
    host: env.ZC_GATEWAY_HOST ?? '0.0.0.0',
    rateLimitPerMinute: n('ZC_RATE_LIMIT_PER_MINUTE', 200),
    rateLimitPerIpPerMinute: n('ZC_RATE_LIMIT_PER_IP_PER_MINUTE', 100),
    authFailuresPerIpPerMinute: n('ZC_AUTH_FAILURES_PER_IP_PER_MINUTE', 20),
    authCacheTtlMs: n('ZC_AUTH_CACHE_TTL_MS', 30_000),
    trustProxy: parseTrustProxy(env.ZC_TRUST_PROXY),
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

function parseTrustProxy(v: string | undefined): GatewayConfig['trustProxy'] {
  if (v === undefined || v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return (_address, hop) => hop < hops;
  }
  return v;
}

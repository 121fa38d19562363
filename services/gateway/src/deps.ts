import type { Bus } from '@zc/shared/bus';
import { readEnv, type SharedConfig } from '@zc/shared/config';
import type { Logger } from '@zc/shared/logging';
import type { Registry } from 'prom-client';
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
  /** Requests one user may have in progress at once on this replica (long-polls aside); 0: no cap. */
  maxConcurrentPerUser: number;
  /** How long a checked API key is trusted without asking the users service. */
  authCacheTtlMs: number;
  /**
   * Whom to believe about the client's address in X-Forwarded-For: `false` (nobody, the
   * default: anyone could spoof the per-IP limit), `true`, a hop count or a list of proxy
   * addresses/CIDRs (Fastify's trustProxy).
   */
  trustProxy: boolean | string | ((address: string, hop: number) => boolean);
  /** One log line per request (ZC_ACCESS_LOG). */
  accessLog: boolean;
  /**
   * Heartbeat delay of a parked GET /events. Zulip sends one after 45 + rand(0..10) s so idle
   * HTTP connections stay under 55 s; a fixed value (ZC_HEARTBEAT_MS) is for tests.
   */
  heartbeatMs: () => number;
}

/** The gateway's settings from the checked environment (@zc/shared/config's schema). */
export function loadGatewayConfig(env = process.env): GatewayConfig {
  const e = readEnv(env);
  return {
    port: e.ZC_GATEWAY_PORT,
    host: e.ZC_GATEWAY_HOST,
    rateLimitPerMinute: e.ZC_RATE_LIMIT_PER_MINUTE,
    rateLimitPerIpPerMinute: e.ZC_RATE_LIMIT_PER_IP_PER_MINUTE,
    authFailuresPerIpPerMinute: e.ZC_AUTH_FAILURES_PER_IP_PER_MINUTE,
    authCacheTtlMs: e.ZC_AUTH_CACHE_TTL_MS,
    maxConcurrentPerUser: e.ZC_MAX_CONCURRENT_REQUESTS_PER_USER,
    trustProxy: parseTrustProxy(e.ZC_TRUST_PROXY),
    accessLog: e.ZC_ACCESS_LOG,
    heartbeatMs: e.ZC_HEARTBEAT_MS > 0 ? () => e.ZC_HEARTBEAT_MS : () => 45_000 + Math.floor(Math.random() * 10_000),
  };
}

export interface GatewayDeps {
  bus: Bus;
  redis: Redis;
  config: SharedConfig;
  gateway: GatewayConfig;
  log: Logger;
  /** The process's Prometheus registry (HTTP RED metrics); absent in some tests. */
  metrics?: Registry;
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: GatewayDeps;
  }
}

function parseTrustProxy(v: string): GatewayConfig['trustProxy'] {
  if (v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    return (_address, hop) => hop < hops;
  }
  return v;
}

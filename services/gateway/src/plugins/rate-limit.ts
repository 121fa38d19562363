/**
 * Per-user request limit kept in Redis, so it holds across gateway replicas (Zulip's
 * api_by_user: 200 a minute). Every response carries X-RateLimit-*; over the limit is 429
 * RATE_LIMIT_HIT with Retry-After. Unauthenticated routes are limited per client IP.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '@zc/shared/errors';
import { redisKey } from '@zc/shared/redis';

const WINDOW_MS = 60_000;

export default fp(
  async (app: FastifyInstance) => {
    const { redis, config, gateway } = app.deps;
    app.addHook('preHandler', async (request, reply) => {
      if (!request.routeOptions.url) return;
      const authed = request.routeOptions.config?.auth !== false;
      const limit = authed ? gateway.rateLimitPerMinute : gateway.rateLimitPerIpPerMinute;
      if (limit <= 0) return;
      const who = authed ? `user:${request.actor.user_id}` : `ip:${request.ip}`;
      const windowStart = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS;
      const key = redisKey(config.redisPrefix, 'ratelimit', who, windowStart);
      const res = await redis.multi().incr(key).pexpire(key, WINDOW_MS + 1000).exec();
      const count = Number(res?.[0]?.[1] ?? 0);
      const resetSeconds = Math.ceil((windowStart + WINDOW_MS) / 1000);
      reply.header('x-ratelimit-limit', String(limit));
      reply.header('x-ratelimit-remaining', String(Math.max(0, limit - count)));
      reply.header('x-ratelimit-reset', String(resetSeconds));
      if (count > limit) {
        const retryAfter = Math.max(0.001, (windowStart + WINDOW_MS - Date.now()) / 1000);
        throw new AppError('RATE_LIMIT_HIT', 'API usage exceeded rate limit', 429, { 'retry-after': retryAfter });
      }
    });
  },
  { name: 'rate-limit' },
);

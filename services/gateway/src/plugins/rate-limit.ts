/**
 * Rolling-window request limits kept in Redis, so they hold across gateway replicas (Zulip's
 * api_by_user: 200 a minute; unauthenticated routes per client address). Every limited
 * response carries X-RateLimit-Limit/Remaining/Reset; over the limit is 429 RATE_LIMIT_HIT
 * with Retry-After (header and body field), as Zulip answers.
 *
 * The per-user check of a request whose credentials came from the cache was already made by
 * the auth plugin in the same Redis round trip as its credential-token read
 * (`request.rateLimitState`); other requests are checked here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '@zc/shared/errors';
import { redisKey } from '@zc/shared/redis';
import { queueWindowCheck, windowState, type WindowState } from '../lib/sliding-window.js';

export const RATE_WINDOW_MS = 60_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The per-user window check, when the auth plugin already made it. */
    rateLimitState: WindowState | null;
  }
}

/** The Redis key of a user's request log. */
export const userRateKey = (prefix: string, userId: number) => redisKey(prefix, 'ratelimit', 'user', userId);

export const rateLimitHit = (retryAfterSeconds: number) =>
  new AppError('RATE_LIMIT_HIT', 'API usage exceeded rate limit', 429, { 'retry-after': retryAfterSeconds });

/** Zulip's X-RateLimit-* headers for a window's state. */
export function windowHeaders(state: WindowState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(Math.max(0, state.limit - state.count)),
    'x-ratelimit-reset': String(state.resetEpochSeconds),
  };
}

/** X-RateLimit-* headers; a refused request is thrown as RATE_LIMIT_HIT. */
export function applyWindowState(reply: FastifyReply, state: WindowState): void {
  reply.headers(windowHeaders(state));
  if (!state.allowed) throw rateLimitHit(state.retryAfterSeconds);
}

export default fp(
  async (app: FastifyInstance) => {
    const { redis, config, gateway } = app.deps;
    app.decorateRequest('rateLimitState', null);
    app.addHook('preHandler', (request, reply, done) => {
      if (!request.routeOptions.url) return done();
      if (request.rateLimitState) {
        applyWindowState(reply, request.rateLimitState);
        return done();
      }
      const authed = request.routeOptions.config?.auth !== false;
      const limit = authed ? gateway.rateLimitPerMinute : gateway.rateLimitPerIpPerMinute;
      if (limit <= 0) return done();
      check(request, reply, authed, limit).then(() => done(), done);
    });
    async function check(request: FastifyRequest, reply: FastifyReply, authed: boolean, limit: number): Promise<void> {
      const key = authed ? userRateKey(config.redisPrefix, request.actor.user_id) : redisKey(config.redisPrefix, 'ratelimit', 'ip', request.ip);
      const pipeline = redis.pipeline();
      queueWindowCheck(pipeline, key, limit, RATE_WINDOW_MS);
      const [[err, raw] = [null, null]] = (await pipeline.exec()) ?? [];
      if (err) throw err;
      applyWindowState(reply, windowState(raw, limit, RATE_WINDOW_MS));
    }
  },
  { name: 'rate-limit' },
);

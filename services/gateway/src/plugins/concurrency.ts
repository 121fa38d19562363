/**
 * Requests one user may have in progress at once on this gateway replica
 * (ZC_MAX_CONCURRENT_REQUESTS_PER_USER). The per-minute rate limit bounds how many requests a
 * user starts, not how many run together: 200 slow requests started within a second would
 * hold every pooled database connection of a service, and every other realm's requests would
 * wait behind them. Past the cap a request is refused at once with 429 RATE_LIMIT_HIT (retry
 * after a second), before any service is asked. Long-polls (GET /events) park rather than
 * work, and are bounded by the queue count, so they do not count.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { rateLimitHit } from './rate-limit.js';

const isLongPoll = (method: string, url: string | undefined) => method === 'GET' && url !== undefined && url.endsWith('/events');

export default fp(
  async (app: FastifyInstance) => {
    const limit = app.deps.gateway.maxConcurrentPerUser;
    if (limit <= 0) return;
    const inFlight = new Map<number, number>();
    app.addHook('preHandler', (request, reply, done) => {
      if (!request.routeOptions.url || request.routeOptions.config?.auth === false || !request.actor) return done();
      if (isLongPoll(request.method, request.routeOptions.url)) return done();
      const userId = request.actor.user_id;
      const n = inFlight.get(userId) ?? 0;
      if (n >= limit) throw rateLimitHit(1);
      inFlight.set(userId, n + 1);
      // 'close' comes exactly once, whether the response was sent or the client went away.
      reply.raw.once('close', () => {
        const left = (inFlight.get(userId) ?? 1) - 1;
        if (left > 0) inFlight.set(userId, left);
        else inFlight.delete(userId);
      });
      done();
    });
  },
  { name: 'concurrency', dependencies: ['rate-limit'] },
);

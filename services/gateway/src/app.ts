/** The gateway application (tests build this; server.ts adds listening and signals). */
import { createServer, type Server } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { GatewayDeps } from './deps.js';
import accessLog from './plugins/access-log.js';
import auth from './plugins/auth.js';
import errorEnvelope, { answerClientError, answerFrameworkError } from './plugins/error-envelope.js';
import inputGuard from './plugins/input-guard.js';
import zulipParams from './plugins/params.js';
export { declaredParams } from './plugins/params.js';
import rateLimit from './plugins/rate-limit.js';
import concurrency from './plugins/concurrency.js';
import callerGone from './plugins/caller-gone.js';
import { registerRoutes } from './routes/index.js';
import { FastLane } from './lib/fast-lane.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes answered in front of Fastify in their plain form (lib/fast-lane.ts). */
    lane: FastLane;
  }
}

/** Every route the gateway serves (`METHOD url`), for tools that walk them all (the fuzz suite). */
export const declaredRoutes = new Set<string>();

export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const lane = new FastLane(deps.log, deps.gateway.trustProxy === false || !deps.gateway.accessLog);
  const app = Fastify({
    // Node's server as Fastify would make it, with the fast lane's requests taken before Fastify's handler.
    serverFactory: (handler, options) => {
      const server: Server = createServer(lane.listener(handler));
      server.keepAliveTimeout = options.keepAliveTimeout as number;
      server.requestTimeout = options.requestTimeout as number;
      server.setTimeout(options.connectionTimeout as number);
      return server;
    },
    loggerInstance: deps.log as unknown as FastifyBaseLogger,
    // Per-request log lines cost more than the request on the hot path; errors are logged by the envelope handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Long-polls park for up to a minute; keep-alive connections outlive them.
    keepAliveTimeout: 75_000,
    requestTimeout: 120_000,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // Emails travel as path segments (GET /users/{email}): room for the longest address.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    // What the router and Node's HTTP parser refuse before any route runs, in the envelope too.
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    trustProxy: deps.gateway.trustProxy,
  });
  // The server's logger on every request rather than a child bound to the request id: building
  // that child was a measurable share of a presence ping, and the envelope's lines (the only
  // ones logged per request) carry the id themselves.
  app.setChildLoggerFactory((logger) => logger);
  app.decorate('deps', deps);
  app.decorate('lane', lane);
  // From the first moment of closing, lane requests go to Fastify, which answers 503 (return503OnClosing).
  app.addHook('preClose', (done) => {
    lane.closing = true;
    done();
  });
  await app.register(accessLog);
  await app.register(errorEnvelope);
  await app.register(zulipParams);
  await app.register(inputGuard);
  await app.register(rateLimit);
  await app.register(concurrency);
  await app.register(auth);
  await app.register(callerGone);
  app.addHook('onSend', (request, reply, payload, done) => {
    // Authenticated answers must never be cached by anything between us and the client.
    if (request.routeOptions.config?.auth !== false) reply.header('cache-control', 'private, no-store');
    done(null, payload);
  });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') declaredRoutes.add(`${method} ${route.url}`);
  });
  await registerRoutes(app);
  return app;
}

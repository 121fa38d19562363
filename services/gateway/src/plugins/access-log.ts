/**
 * One access-log line per request (route template, status, duration, user, trace id; parked
 * long-polls marked) and the HTTP RED metrics. ZC_ACCESS_LOG=false keeps the metrics and
 * drops the lines (load tests).
 */
import type { Actor } from '@zc/shared/contracts';
import fp from 'fastify-plugin';
import { httpMetrics } from '@zc/shared/metrics';
import { nameServerSpan, telemetryStarted } from '@zc/shared/telemetry';

export default fp(async (app) => {
  const { log, gateway, metrics } = app.deps;
  const red = metrics ? httpMetrics(metrics) : undefined;
  const access = log.child({ kind: 'access' });
  // Hooks with a callback rather than async ones, here and in the other plugins that run on
  // every request: each async hook is a promise and a microtask turn of every request.
  // The HTTP server span is still open here (it ends before onResponse runs). Without a
  // tracer provider (started by the preload, before this, only with an OTLP endpoint) there
  // is no span to name, and the hook is not added: it was about 1% of a presence ping.
  if (telemetryStarted()) {
    app.addHook('onRequest', (request, _reply, done) => {
      nameServerSpan(request.method, request.routeOptions.url ?? 'unmatched');
      done();
    });
  }
  app.addHook('onResponse', (request, reply, done) => {
    const actor = request.actor as Actor | undefined;
    // Unmatched paths share one label, so a scanner cannot create series.
    logAndCount(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime, actor, request.ip);
    done();
  });
  app.lane.observe = (r) => logAndCount(r.method, r.route, r.status, r.ms, r.actor, r.ip);
  function logAndCount(method: string, route: string, status: number, ms: number, actor: Actor | undefined, ip: string | undefined): void {
    red?.observe(route, method, status, ms / 1000);
    if (!gateway.accessLog) return;
    access.info(
      {
        method,
        route,
        status,
        duration_ms: Math.round(ms * 10) / 10,
        ...(actor ? { user_id: actor.user_id, realm_id: actor.realm_id } : {}),
        ...(method === 'GET' && route.endsWith('/events') ? { longpoll: true } : {}),
        client_ip: ip,
        // trace_id and span_id come from the logger's mixin (shared/logging).
      },
      `${method} ${route} ${status} ${Math.round(ms)}ms`,
    );
  }
});

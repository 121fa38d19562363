/**
 * The admin port every service opens (operations.md §1.4, §2.4): /livez without dependency
 * checks, /readyz with a JSON body of per-dependency checks that turns 503 when one fails or
 * once shutdown has begun, /metrics in Prometheus text. Never routed by the gateway.
 */
import t from 'tap';
import { request } from 'undici';
import { createLogger } from '@zc/shared/logging';
import { startService, type ServiceDefinition } from '@zc/shared/service';
import { testEnv } from '@zc/shared/testing';
import { usersService } from '@zc/users';

async function get(port: number, path: string) {
  const res = await request(`http://127.0.0.1:${port}${path}`);
  const text = await res.body.text();
  return { status: res.statusCode, contentType: String(res.headers['content-type'] ?? ''), text };
}

const log = createLogger({ service: 'admin-test', level: 'silent' });

t.test('a real service (users) on its admin port', async (t) => {
  const env = await testEnv(t);
  const users = await startService(usersService, { config: env.config, log, admin: true });
  t.teardown(() => users.stop());
  const port = users.adminPort;
  t.ok(port > 0, `admin port ${port}`);

  const live = await get(port, '/livez');
  t.equal(live.status, 200);
  t.same(JSON.parse(live.text), { status: 'ok' });
  t.equal((await get(port, '/healthz')).status, 200, '/healthz is kept as an alias');

  const ready = await get(port, '/readyz');
  t.equal(ready.status, 200);
  t.match(ready.contentType, /^application\/json/);
  t.same(JSON.parse(ready.text), { status: 'ok', shutting_down: false, checks: { nats: true, postgres: true, redis: true } }, 'one check per dependency');

  const metrics = await get(port, '/metrics');
  t.equal(metrics.status, 200);
  t.match(metrics.contentType, /^text\/plain; version=0\.0\.4/);
  t.match(metrics.text, /^# HELP zc_build_info Build metadata$/m);
  t.match(metrics.text, /^zc_build_info\{version="0\.1\.0",service="users"\} 1$/m, 'build info, labelled with the service');
  t.match(metrics.text, /^# TYPE process_cpu_seconds_total counter$/m, 'process metrics');
  t.match(metrics.text, /^nodejs_eventloop_lag_seconds\{service="users"\} [\d.e-]+$/m, 'event-loop lag');
  const samples = metrics.text.split('\n').filter((l) => l && !l.startsWith('#'));
  const malformed = samples.filter((l) => !/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? ([-+\d.eE]+|NaN|[+-]Inf)$/.test(l));
  t.same(malformed, [], `all ${samples.length} sample lines are name{labels} value`);

  t.equal((await get(port, '/nope')).status, 404);
  t.equal((await get(port, '/readyz?verbose=1')).status, 200, 'query strings are ignored');
});

t.test('readiness follows the checks and fails as soon as stopping begins', async (t) => {
  const env = await testEnv(t);
  let upstreamOk = true;
  let releaseStop: () => void = () => undefined;
  const stopGate = new Promise<void>((resolve) => {
    releaseStop = resolve;
  });
  // A service whose stop waits for us, as one draining long-polls would.
  const draining: ServiceDefinition = {
    name: 'draining',
    usesRedis: true,
    async start() {
      return { checks: { upstream: async () => upstreamOk }, stop: () => stopGate };
    },
  };
  const running = await startService(draining, { config: env.config, log, admin: true });
  const port = running.adminPort;

  t.same(JSON.parse((await get(port, '/readyz')).text), { status: 'ok', shutting_down: false, checks: { nats: true, redis: true, upstream: true } }, 'no postgres check without a schema');

  upstreamOk = false;
  const degraded = await get(port, '/readyz');
  t.equal(degraded.status, 503, 'a failing check makes the service unready');
  t.same(JSON.parse(degraded.text), { status: 'unavailable', shutting_down: false, checks: { nats: true, redis: true, upstream: false } });
  t.equal((await get(port, '/livez')).status, 200, 'but it is still alive: no restart for a dependency outage');
  upstreamOk = true;
  t.equal((await get(port, '/readyz')).status, 200, 'and ready again when the check recovers');

  const stopped = running.stop();
  const during = await get(port, '/readyz');
  t.equal(during.status, 503, 'unready while draining, so the load balancer stops sending');
  t.match(JSON.parse(during.text), { status: 'unavailable', shutting_down: true });
  t.equal((await get(port, '/livez')).status, 200, 'alive while draining');
  t.equal((await get(port, '/metrics')).status, 200, 'metrics while draining');
  releaseStop();
  await stopped;
  await t.rejects(get(port, '/livez'), 'the admin port closes last');
});

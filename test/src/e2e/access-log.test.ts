/**
 * The gateway's access log and HTTP RED metrics: one JSON line per request with route
 * template, status, duration and client (long-polls marked), and per-route series on the
 * admin port's /metrics whose labels never carry ids.
 */
import { Writable } from 'node:stream';
import t from 'tap';
import { pino } from 'pino';
import { startService } from '@zc/shared/service';
import { testEnv } from '@zc/shared/testing';
import { gatewayService } from '@zc/gateway';

t.test('one line per request, and RED metrics per route', async (t) => {
  const env = await testEnv(t);
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = pino({ level: 'info' }, sink);
  const gw = gatewayService({ port: 0, host: '127.0.0.1', accessLog: true });
  const svc = await startService(gw, { config: env.config, log });
  t.teardown(() => svc.stop());
  const base = `http://127.0.0.1:${gw.port()}`;

  // No users service runs here: server_settings answers 503, which is logged like any status.
  const settingsStatus = (await fetch(`${base}/api/v1/server_settings`)).status;
  t.equal((await fetch(`${base}/api/v1/users/12345`)).status, 401);
  t.equal((await fetch(`${base}/api/v1/events?queue_id=abc`)).status, 401);
  t.equal((await fetch(`${base}/no/such/path/98765`)).status, 404);
  await new Promise((r) => setTimeout(r, 100));

  const access = lines.filter((l) => l.kind === 'access');
  t.equal(access.length, 4, 'one line per request');
  t.match(access[0], { level: 30, method: 'GET', route: '/api/v1/server_settings', status: settingsStatus, duration_ms: Number, client_ip: '127.0.0.1', msg: new RegExp(`^GET /api/v1/server_settings ${settingsStatus} \\d+ms$`) });
  t.match(access[1], { route: '/api/v1/users/:who', status: 401 }, 'the route template, not the id');
  t.match(access[2], { route: '/api/v1/events', longpoll: true }, 'long-polls are marked');
  t.match(access[3], { route: 'unmatched', status: 404 });
  t.notOk(access[0]?.longpoll);

  const metrics = await (await fetch(`http://127.0.0.1:${svc.adminPort}/metrics`)).text();
  const cls = `${Math.floor(settingsStatus / 100)}xx`;
  t.match(metrics, new RegExp(`^zc_http_requests_total\\{route="/api/v1/server_settings",method="GET",status_class="${cls}",service="gateway"\\} 1$`, 'm'));
  t.match(metrics, /^zc_http_requests_total\{route="\/api\/v1\/users\/:who",method="GET",status_class="4xx",service="gateway"\} 1$/m);
  t.match(metrics, new RegExp(`^zc_http_request_duration_seconds_bucket\\{le="90",service="gateway",route="/api/v1/server_settings",method="GET",status_class="${cls}"\\} 1$`, 'm'));
  t.notMatch(metrics, /12345|98765/, 'no ids in labels');
});

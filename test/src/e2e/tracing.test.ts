/**
 * One trace per request (issue 15): the services run as their own processes with the
 * telemetry preload (`node --import @zc/shared/instrumentation`, as the image, the chart and
 * `npm start` run them) and export to a local OTLP receiver. POST /messages must give one
 * span tree: the gateway's HTTP server span → its NATS request → the messages service's
 * handling → PostgreSQL queries, all under one trace id; log lines inside carry that id.
 */
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { testEnv } from '@zc/shared/testing';
import { doCreateRealm, makeDeps } from '@zc/users/manage';
import { Cluster, ROOT } from '../faults/cluster.js';
import { Http, Statuses } from '../faults/load.js';
import { startOtlpReceiver, type ReceivedSpan } from '../otlp-receiver.js';

const SERVER = 2;
const CLIENT = 3;
const isPg = (s: ReceivedSpan) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('POST /messages is one span tree from the gateway to PostgreSQL', async (t) => {
  const env = await testEnv(t);
  const receiver = await startOtlpReceiver();
  t.teardown(() => receiver.close());
  const logFile = path.join(os.tmpdir(), `zc-tracing-${process.pid}.log`);
  const cluster = await Cluster.start(
    {
      ZC_DATABASE_URL: env.databaseUrl,
      ZC_REDIS_URL: env.infra.redisUrl,
      ZC_NATS_URL: env.infra.natsUrl,
      ZC_SUBJECT_PREFIX: env.prefix,
      ZC_REDIS_PREFIX: env.prefix,
      ZC_RATE_LIMIT_PER_MINUTE: '0',
      ZC_RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      ZC_EXTERNAL_PORT: '80',
      ZC_SECRET_KEY: String(env.config.secretKey),
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
    {},
    logFile,
    ['--import', path.join(ROOT, 'shared', 'dist', 'instrumentation', 'index.js')],
  );
  t.teardown(() => cluster.stop());
  await cluster.waitGateways();

  const pool = createPool(env.databaseUrl, { max: 2 });
  t.teardown(() => pool.end());
  const deps = makeDeps({ pool, config: loadConfig(env.config), log: createLogger({ service: 'test', level: 'silent' }) });
  const created = await doCreateRealm(deps, { name: 'Traces', subdomain: '', owner: { email: 'iago@traces.test', password: 'pw-traces-1', full_name: 'Iago' } });
  const iago = { email: 'iago@traces.test', api_key: created.apiKey };
  const http = new Http(cluster.gatewayUrls, new Statuses());
  for (let i = 0; ; i++) {
    const r = await http.call(iago, 'POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'traced' }]) });
    if (r.status === 200) break;
    if (i > 40) throw new Error(`subscribing failed: ${r.status} ${JSON.stringify(r.body)}`);
    await sleep(250);
  }
  // The messages service hears of the subscription through an event: retry until a send works.
  let sent: { status: number; body: Record<string, unknown> } | undefined;
  for (let i = 0; i < 80; i++) {
    sent = await http.call(iago, 'POST', '/messages', { type: 'stream', to: 'traced', topic: 'spans', content: 'one trace' });
    if (sent.status === 200) break;
    await sleep(250);
  }
  t.equal(sent?.status, 200, 'the message is sent');
  const messageId = sent?.body.id;

  // The last POST /messages the gateway served, and every span of its trace.
  const rootOf = () =>
    receiver.spans.filter((s) => s.service === 'zc-gateway' && s.kind === SERVER && s.attributes['http.request.method'] === 'POST' && s.attributes['url.path'] === '/api/v1/messages').at(-1);
  const wanted = (trace: ReceivedSpan[]) =>
    trace.some((s) => s.service === 'zc-messages' && s.kind === SERVER) && trace.some((s) => s.service === 'zc-messages' && isPg(s));
  let root: ReceivedSpan | undefined;
  let trace: ReceivedSpan[] = [];
  for (let i = 0; i < 100; i++) {
    root = rootOf();
    trace = root ? receiver.spans.filter((s) => s.traceId === root?.traceId) : [];
    if (root && wanted(trace)) break;
    await sleep(100);
  }
  t.ok(root, `the gateway exported its HTTP server span (content types seen: ${[...receiver.contentTypes].join(', ')})`);
  if (!root) return;
  await sleep(500); // stragglers of the same trace
  trace = receiver.spans.filter((s) => s.traceId === root?.traceId);
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  const parent = (s: ReceivedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const ancestors = (s: ReceivedSpan) => {
    const out: ReceivedSpan[] = [];
    for (let p = parent(s); p; p = parent(p)) out.push(p);
    return out;
  };
  const tree = trace.map((s) => `${s.service} ${['', 'internal', 'server', 'client', 'producer', 'consumer'][s.kind]} ${s.name}`).join('\n');

  t.notOk(root.parentSpanId, 'the gateway span is the root');
  t.equal(root.name, 'POST /api/v1/messages', 'named after the route template');
  t.equal(root.attributes['http.route'], '/api/v1/messages');
  const strays = trace.filter((s) => s !== root && !ancestors(s).includes(root));
  t.same(strays.map((s) => `${s.service} ${s.name}`), [], `every span of the trace hangs under the root (${trace.length} spans)`);

  const request = trace.find((s) => s.service === 'zc-gateway' && s.kind === CLIENT && /\.messages\.v1\.send$/.test(s.name));
  t.ok(request, `the gateway's NATS request is a client span\n${tree}`);
  const handling = trace.find((s) => s.service === 'zc-messages' && s.kind === SERVER && /\.messages\.v1\.send$/.test(s.name));
  t.ok(handling, 'the messages service handles it in a server span');
  t.equal(handling && parent(handling), request, 'its parent is the gateway request, carried in NATS headers');
  const inserts = trace.filter((s) => s.service === 'zc-messages' && isPg(s));
  t.ok(inserts.length > 0, 'PostgreSQL queries of the messages service are spans of the trace');
  t.ok(
    inserts.some((s) => /INSERT/i.test(String(s.attributes['db.query.text'] ?? s.attributes['db.statement'] ?? s.name))),
    'the message row is written inside the trace',
  );
  t.ok(trace.some((s) => s.service === 'zc-users' && s.kind === SERVER), 'the users service answers the messages service inside the trace');
  t.ok(trace.some((s) => (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'redis'), 'Redis commands are spans of the trace');

  // The access-log line of that request names the trace.
  await cluster.stop();
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const access = lines.find((l) => l.includes('"kind":"access"') && l.includes('"route":"/api/v1/messages"') && l.includes(root.traceId));
  t.ok(access, 'the access log line of the request carries its trace id');
  t.ok(messageId, 'the send answered with an id');
});

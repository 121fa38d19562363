/**
 * The benchmark's own system, in a process of its own, away from the load generator (whose
 * event loop and garbage collector must never stall the services it measures). Two layouts:
 * - `processes` (default): one process per service replica, as `npm start` and a deployment
 *   run them, so the services use every core; this process only starts and stops them.
 * - `inprocess` (ZC_BENCH_LAYOUT=inprocess): every service in this one process, as the test
 *   harness runs them.
 * Either way the system gets its own database and prefixes, rate limits are off, and it
 * prints one JSON line describing itself, then runs until its stdin closes or it gets
 * SIGTERM, and removes its database and prefixes on the way out.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfig, nodeOptionsFor, SERVICE_NODE_FLAGS } from '@zc/shared/config';
import { createLogger } from '@zc/shared/logging';
import { testEnv } from '@zc/shared/testing';
import { ApiClient } from '../client.js';
import { seedPeople, startSystem, type People, type ServiceName } from '../harness.js';

const teardowns: Array<() => unknown> = [];
const owner = { teardown: (fn: () => unknown) => void teardowns.push(fn) };

let stopping: Promise<never> | undefined;

/** Runs the teardowns once, however many of stdin's end, SIGTERM and SIGINT arrive (a killed run sends several). */
function shutdown(code: number): Promise<never> {
  stopping ??= runTeardowns(code);
  return stopping;
}

async function runTeardowns(code: number): Promise<never> {
  for (const fn of teardowns.reverse()) {
    try {
      await fn();
    } catch (err) {
      console.error('bench system: teardown failed', err);
    }
  }
  process.exit(code);
}

const replicas = JSON.parse(process.env.ZC_BENCH_REPLICAS_JSON ?? '{}') as Partial<Record<ServiceName, number>>;
const ORDER: ServiceName[] = ['users', 'subscriptions', 'messages', 'drafts', 'uploads', 'events', 'gateway'];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Polls until `check` holds (the services are up and have each other's read models). */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`bench system: ${what} not ready within ${ms} ms`);
}

interface Hello {
  baseUrl: string;
  gatewayUrls: string[];
  people: People;
  env: Awaited<ReturnType<typeof testEnv>>;
  pids: number[];
  /** Each service replica's process (processes layout). */
  services?: Array<{ service: string; pid: number }>;
  /** Each gateway replica's admin server (/metrics), processes layout. */
  gatewayAdminUrls?: string[];
}

async function startProcesses(): Promise<Hello> {
  const env = await testEnv(owner);
  const log = createLogger({ service: 'bench', level: 'warn' });
  const children: ChildProcess[] = [];
  const services: Array<{ service: string; pid: number }> = [];
  teardowns.push(async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null) return resolve();
            const timer = setTimeout(() => c.kill('SIGKILL'), 15_000);
            c.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  });
  const config = env.config;
  const gatewayUrls: string[] = [];
  const gatewayAdminUrls: string[] = [];
  // The uploads service's local-disk storage, shared by its replicas and removed at the end.
  const uploadsDir = mkdtempSync(path.join(os.tmpdir(), 'zc-bench-uploads-'));
  teardowns.push(async () => rmSync(uploadsDir, { recursive: true, force: true }));
  for (const service of ORDER) {
    for (let i = 0; i < (replicas[service] ?? 1); i++) {
      const port = service === 'gateway' ? await freePort() : 0;
      // A gateway's admin port is known, so that a scenario can read its metrics.
      const adminPort = service === 'gateway' ? await freePort() : 0;
      if (service === 'gateway') {
        gatewayUrls.push(`http://127.0.0.1:${port}`);
        gatewayAdminUrls.push(`http://127.0.0.1:${adminPort}`);
      }
      const entry = fileURLToPath(new URL(`../../../services/${service}/dist/main.js`, import.meta.url));
      // ZC_BENCH_SERVICE_NODE_ARGS: node flags for every service process, e.g. `--cpu-prof
      // --cpu-prof-dir=/tmp/prof` for one profile per service (written when it stops).
      const nodeArgs = (process.env.ZC_BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
      const nodeOptions = nodeOptionsFor(service, process.env.NODE_OPTIONS);
      const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, entry], {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...process.env,
          ZC_SERVICE: service,
          ZC_INSTANCE: `bench-${service}-${i}`,
          ZC_DATABASE_URL: config.databaseUrl,
          ZC_REDIS_URL: config.redisUrl,
          ZC_NATS_URL: config.natsUrl,
          ZC_SUBJECT_PREFIX: config.subjectPrefix,
          ZC_REDIS_PREFIX: config.redisPrefix,
          ZC_SECRET_KEY: config.secretKey,
          ZC_ADMIN_PORT: String(adminPort),
          ZC_GATEWAY_PORT: String(port),
          ZC_GATEWAY_HOST: '127.0.0.1',
          ZC_RATE_LIMIT_PER_MINUTE: '0',
          ZC_MAX_CONCURRENT_REQUESTS_PER_USER: '0',
          ZC_RATE_LIMIT_PER_IP_PER_MINUTE: '0',
          ZC_UPLOADS_DIR: uploadsDir,
          // The scenarios count the messages their queues receive; a greeting is not one of them.
          ZC_WELCOME_MESSAGES: 'false',
          // The service's own Node options, as npm start and the chart give them.
          ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
          // Nor does a "general" stream everyone joins: the scenarios build their own streams.
          ZC_NEW_REALM_STREAMS: 'false',
          LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
        },
      });
      children.push(child);
      services.push({ service, pid: child.pid as number });
      // Users first: the realm is seeded through its schema once its migrations ran.
      if (service === 'users' && i === 0) await new Promise((r) => setTimeout(r, 500));
    }
  }
  const { pool, people } = await seedPeople(env, log);
  teardowns.push(() => pool.end());
  const iago = new ApiClient(gatewayUrls[0] as string, { email: people.iago.email, apiKey: people.iago.api_key });
  for (const url of gatewayUrls) {
    await until(`gateway ${url}`, async () => (await new ApiClient(url, undefined).get('/server_settings')).status === 200);
  }
  // Every service answers (and has the realm in its read models) before the first scenario.
  await until('users and messages', async () => (await iago.get('/users/me')).status === 200);
  await until('subscriptions', async () => (await iago.get('/streams')).status === 200);
  await until('drafts', async () => (await iago.get('/drafts')).status === 200);
  await until('uploads', async () => (await iago.get('/attachments')).status === 200);
  await until('events', async () => {
    const q = await iago.post('/register', { event_types: ['message'] });
    if (q.status !== 200) return false;
    await iago.delete('/events', { queue_id: q.body.queue_id as string });
    return true;
  });
  return { baseUrl: gatewayUrls[0] as string, gatewayUrls, gatewayAdminUrls, people, env, pids: children.map((c) => c.pid as number), services };
}

async function startInProcess(): Promise<Hello> {
  const sys = await startSystem(owner, { replicas });
  return { baseUrl: sys.baseUrl, gatewayUrls: sys.gatewayUrls, people: sys.people, env: sys.env, pids: [] };
}

try {
  const layout = process.env.ZC_BENCH_LAYOUT ?? 'processes';
  if (layout !== 'processes' && layout !== 'inprocess') throw new Error(`ZC_BENCH_LAYOUT must be processes or inprocess, not ${layout}`);
  const hello = layout === 'processes' ? await startProcesses() : await startInProcess();
  const { iago, desdemona, hamlet, othello, polonius, bot } = hello.people;
  const strip = (a: typeof iago) => ({ user_id: a.user_id, email: a.email, api_key: a.api_key, full_name: a.full_name });
  const config = hello.env.config;
  process.stdout.write(
    `${JSON.stringify({
      baseUrl: hello.baseUrl,
      gatewayUrls: hello.gatewayUrls,
      layout,
      pids: hello.pids,
      services: hello.services ?? [],
      gatewayAdminUrls: hello.gatewayAdminUrls ?? [],
      people: { iago: strip(iago), desdemona: strip(desdemona), hamlet: strip(hamlet), othello: strip(othello), polonius: strip(polonius), bot: strip(bot) },
      infra: {
        databaseUrl: hello.env.databaseUrl,
        natsUrl: config.natsUrl,
        redisUrl: config.redisUrl,
        subjectPrefix: config.subjectPrefix,
        redisPrefix: config.redisPrefix,
        secretKey: config.secretKey,
        rootDomain: loadConfig(config).rootDomain,
      },
    })}\n`,
  );
} catch (err) {
  console.error('bench system: failed to start', err);
  await shutdown(1);
}

process.stdin.on('end', () => void shutdown(0));
process.stdin.resume();
process.once('SIGTERM', () => void shutdown(0));
process.once('SIGINT', () => void shutdown(0));

// `npm start`: migrations, the development realm, and one supervised process per service
// replica (`npm start -- --replicas messages=2,gateway=2`). Crashed processes restart with
// backoff; Ctrl-C or SIGTERM stops everything cleanly.
import cluster from 'node:cluster';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { loadConfig, nodeOptionsFor, realmUrl, SERVICE_NODE_FLAGS } from '@zc/shared/config';
import { createPool, runMigrations } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doCreateRealm, doCreateUser, doGrant, makeDeps, MIGRATIONS_DIR, realmStore } from '@zc/users/manage';
import { ensureDatabase, ensureSecretKey, ROOT } from './lib.mjs';

// New services go last, so the admin ports of the others (README) stay where they were.
const SERVICES = ['users', 'subscriptions', 'messages', 'drafts', 'events', 'gateway', 'uploads'];
const DEV_REALM_FILE = path.join(ROOT, '.dev-realm.json');
// With an OTLP endpoint every service starts with the telemetry preload (shared/instrumentation),
// so that http, pg and ioredis are patched before they load: one trace per request.
const TRACING = Boolean(process.env.OTEL_SDK_DISABLED !== 'true' && (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT));
const PRELOAD = path.join(ROOT, 'shared', 'dist', 'instrumentation', 'index.js');
const ADMIN_PORT_BASE = Number(process.env.ZC_ADMIN_PORT_BASE ?? 9100);

const { values: cli } = parseArgs({ options: { replicas: { type: 'string' } }, strict: true });
const replicas = Object.fromEntries(SERVICES.map((s) => [s, 1]));
for (const part of (cli.replicas ?? process.env.ZC_REPLICAS ?? '').split(',').filter(Boolean)) {
  const [name, count] = part.split('=');
  if (!SERVICES.includes(name) || !/^\d+$/.test(count ?? '')) {
    console.error(`--replicas: expected name=count with name one of ${SERVICES.join(', ')}, got '${part}'`);
    process.exit(2);
  }
  replicas[name] = Number(count);
}

ensureSecretKey();
const config = loadConfig();
const say = (msg) => process.stdout.write(`[start] ${msg}\n`);

// --- the development realm -------------------------------------------------------------------
const PEOPLE = [
  { key: 'owner', email: 'iago@zulip.test', full_name: 'Iago', role: 100 },
  { key: 'administrator', email: 'desdemona@zulip.test', full_name: 'Desdemona', role: 200 },
  { key: 'member', email: 'hamlet@zulip.test', full_name: 'King Hamlet', role: 400 },
  { key: 'member2', email: 'othello@zulip.test', full_name: 'Othello, the Moor of Venice', role: 400 },
  { key: 'guest', email: 'polonius@zulip.test', full_name: 'Polonius', role: 600 },
  { key: 'bot', email: 'default-bot@zulip.test', full_name: 'Default Bot', role: 400, is_bot: true },
];
const DEV_PASSWORD = process.env.ZC_DEV_PASSWORD ?? 'zulip-dev-password';

async function ensureDevRealm() {
  await ensureDatabase(config.databaseUrl);
  const pool = createPool(config.databaseUrl, { max: 2 });
  const deps = makeDeps({ pool, config, log: createLogger({ service: 'start', level: 'warn' }) });
  try {
    await runMigrations(pool, 'users', MIGRATIONS_DIR);
    let realm = await realmStore.findBySubdomain(pool, '');
    const accounts = [];
    if (!realm) {
      const owner = PEOPLE[0];
      const created = await doCreateRealm(deps, {
        name: 'Zulip Dev',
        subdomain: '',
        owner: { email: owner.email, password: DEV_PASSWORD, full_name: owner.full_name },
      });
      realm = created.realm;
      accounts.push({ role: owner.key, user_id: created.owner.id, email: owner.email, api_key: created.apiKey });
      for (const p of PEOPLE.slice(1)) {
        const { user, apiKey } = await doCreateUser(deps, realm, {
          email: p.email,
          password: p.is_bot ? null : DEV_PASSWORD,
          full_name: p.full_name,
          role: p.role,
          is_bot: p.is_bot ?? false,
          bot_owner_id: p.is_bot ? created.owner.id : null,
        });
        accounts.push({ role: p.key, user_id: user.id, email: p.email, api_key: apiKey });
      }
      await doGrant(deps, realm, PEOPLE[0].email, 'can_create_users');
    } else {
      // A second start reuses the realm; keys are read back from their encrypted copies.
      for (const p of PEOPLE) {
        const { rows } = await pool.query(
          'SELECT id, api_key_enc FROM users.user_profile WHERE realm_id = $1 AND lower(delivery_email) = lower($2)',
          [realm.id, p.email],
        );
        if (rows[0]) accounts.push({ role: p.key, user_id: rows[0].id, email: p.email, api_key: deps.vault.decrypt(rows[0].api_key_enc) });
      }
    }
    const info = { base_url: realmUrl(config, ''), realm_id: realm.id, password: DEV_PASSWORD, accounts };
    writeFileSync(DEV_REALM_FILE, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    return info;
  } finally {
    await pool.end();
  }
}

// --- supervision ---------------------------------------------------------------------------
const procs = new Map(); // key -> { worker, restarts, service, index }
let stopping = false;

function prefixLines(stream, label, out) {
  const rl = readline.createInterface({ input: stream });
  rl.on('line', (line) => out.write(`[${label}] ${line}\n`));
}

function spawn(service, index) {
  const label = `${service}-${index}`;
  const nodeOptions = nodeOptionsFor(service, process.env.NODE_OPTIONS);
  cluster.setupPrimary({
    exec: path.join(ROOT, 'services', service, 'dist', 'main.js'),
    silent: true,
    execArgv: [...process.execArgv, ...SERVICE_NODE_FLAGS, ...(TRACING ? ['--import', PRELOAD] : [])],
  });
  const worker = cluster.fork({
    // Human-readable lines at a terminal, JSON when the output goes to a file or a pipe.
    ZC_LOG_FORMAT: process.env.ZC_LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
    ZC_ADMIN_PORT: String(ADMIN_PORT_BASE + SERVICES.indexOf(service) * 10 + index),
    ZC_INSTANCE: label,
    ZC_SERVICE: service,
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
  });
  prefixLines(worker.process.stdout, label, process.stdout);
  prefixLines(worker.process.stderr, label, process.stderr);
  const entry = procs.get(label) ?? { restarts: 0, service, index };
  entry.worker = worker;
  entry.startedAt = Date.now();
  procs.set(label, entry);
  worker.on('exit', (code, signal) => {
    if (stopping) return;
    // Quick crash loops back off up to 30 s; a process that ran a minute starts over.
    if (Date.now() - entry.startedAt > 60_000) entry.restarts = 0;
    const delay = Math.min(30_000, 500 * 2 ** entry.restarts);
    entry.restarts += 1;
    say(`${label} exited (${signal ?? code}); restarting in ${delay} ms`);
    setTimeout(() => !stopping && spawn(service, index), delay);
  });
}

async function stopAll(signal) {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping every service`);
  const exits = [...procs.values()].map(
    (p) =>
      new Promise((resolve) => {
        if (p.worker.isDead()) return resolve();
        p.worker.once('exit', resolve);
        p.worker.process.kill('SIGTERM');
      }),
  );
  const timer = setTimeout(() => {
    for (const p of procs.values()) if (!p.worker.isDead()) p.worker.process.kill('SIGKILL');
  }, 30_000);
  await Promise.all(exits);
  clearTimeout(timer);
  say('stopped');
  process.exit(0);
}

async function waitForGateway(url, timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      const res = await fetch(`${url}/api/v1/server_settings`);
      if (res.ok) return true;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

process.on('SIGINT', () => void stopAll('SIGINT'));
process.on('SIGTERM', () => void stopAll('SIGTERM'));

const info = await ensureDevRealm();
for (const service of SERVICES) for (let i = 0; i < replicas[service]; i++) spawn(service, i);
const localUrl = `http://127.0.0.1:${config.externalPort}`;
if (!(await waitForGateway(localUrl))) say(`gateway did not answer at ${localUrl} within a minute; see the logs above`);

const lines = [
  '',
  '================ development realm ================',
  `base URL:  ${info.base_url}   (also ${localUrl})`,
  `password:  ${info.password} (for every person; POST /api/v1/fetch_api_key)`,
  ...info.accounts.map((a) => `${a.role.padEnd(13)} ${a.email.padEnd(24)} api_key ${a.api_key}`),
  `saved to:  ${DEV_REALM_FILE}`,
  `try:       curl -u ${info.accounts.find((a) => a.role === 'member')?.email}:${info.accounts.find((a) => a.role === 'member')?.api_key} ${localUrl}/api/v1/users/me`,
  '====================================================',
  '',
];
process.stdout.write(lines.join('\n'));

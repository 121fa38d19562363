/**
 * Boot and shutdown shared by every service: config → logger → PostgreSQL pool and
 * migrations → NATS → the service's own handlers → outbox relay → ready. On SIGTERM the
 * admin server reports not-ready first, then handlers drain and connections close.
 */
import http from 'node:http';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { Bus } from '../bus/index.js';
import { ConfigError, loadConfig, readEnv, unknownVariables, type SharedConfig } from '../config/index.js';
import { createPool, runMigrations, type MigrationLibrary, type Pool } from '../db/index.js';
import { createLogger, type Logger } from '../logging/index.js';
import { sharedRead } from '../metrics/index.js';
import { startOutboxRelay, type LocalOutboxWake, type OutboxCoalescing, type RelayHandle } from '../outbox/index.js';
import { createRedis, type Redis } from '../redis/index.js';
import { startTelemetry, stopTelemetry, telemetryEnabled, telemetryStarted } from '../telemetry/index.js';

export interface ServiceContext {
  name: string;
  config: SharedConfig;
  log: Logger;
  /** Undefined for a service without a schema (the gateway). */
  pool: Pool;
  bus: Bus;
  redis: Redis;
  metrics: Registry;
  /** This replica's outbox relay, for writes that wake it themselves (never leading before the relay starts, after `start`). */
  outbox: LocalOutboxWake;
}

export interface StartedParts {
  stop?(): Promise<void>;
  /** Extra readiness checks, reported by /readyz. */
  checks?: Record<string, () => Promise<boolean>>;
}

export interface ServiceDefinition {
  /** Service name; also its PostgreSQL schema and NATS queue group. */
  name: string;
  /** Absolute path of the service's migrations; omitted for a service without a schema. */
  migrationsDir?: string;
  /** Shared libraries' migrations applied to this service's schema too (db/MigrationLibrary). */
  migrationLibraries?: readonly MigrationLibrary[];
  usesRedis?: boolean;
  /** Whether this service relays an outbox (every service with a schema does). */
  relaysOutbox?: boolean;
  /** Outbox rows its relay publishes several to an event (statistics; see OutboxCoalescing). */
  outboxCoalescing?: readonly OutboxCoalescing[];
  start(ctx: ServiceContext): Promise<StartedParts | undefined>;
}

export interface RunningService {
  ctx: ServiceContext;
  adminPort: number;
  /** Relays pending outbox rows now. */
  flushOutbox(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  config?: Partial<SharedConfig>;
  log?: Logger;
  /** Starts the admin HTTP server (/livez, /readyz, /metrics); default true. */
  admin?: boolean;
}

const READY_CHECK_TIMEOUT_MS = 2_000;

/**
 * Outbox backlog and lag of `schema`, read at scrape time (every replica reports the same
 * numbers; alerts take max by schema). A growing lag means events are not reaching NATS.
 */
function outboxMetrics(registry: Registry, pool: Pool, schema: string): void {
  const read = sharedRead(async () => {
    const { rows } = await pool
      .query<{ n: string; age: number | null }>(`SELECT count(*) AS n, extract(epoch FROM now() - min(created_at))::float8 AS age FROM "${schema}".outbox`)
      .catch(() => ({ rows: [] as Array<{ n: string; age: number | null }> }));
    return rows[0] ? { backlog: Number(rows[0].n), lag: Math.max(0, rows[0].age ?? 0) } : undefined;
  });
  const gauges = [
    { name: 'zc_outbox_backlog', help: 'Events written to the outbox and not yet relayed to NATS (with those relayed in the last second, deleted by the next pass)', field: 'backlog' },
    { name: 'zc_outbox_lag_seconds', help: 'Age of the oldest event not yet relayed to NATS (0 when none waits)', field: 'lag' },
  ] as const;
  for (const g of gauges) {
    new Gauge({
      name: g.name,
      help: g.help,
      labelNames: ['schema'],
      registers: [registry],
      async collect() {
        const r = await read();
        if (r) this.set({ schema }, r[g.field]);
      },
    });
  }
}

function withinMs<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    p.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * How often the event-loop lag histogram (nodejs_eventloop_lag_*) samples. prom-client's
 * default, 10 ms, is a timer that wakes every service a hundred times a second, busy or idle:
 * over half of an idle service's wake-ups, and on a virtual machine where a wake-up costs tens
 * of microseconds, CPU every other process waits for. Each tick still measures how late it
 * ran, so a stall that holds a tick back shows in the histogram as before.
 */
export const EVENT_LOOP_MONITOR_MS = 100;

export async function startService(def: ServiceDefinition, opts: StartOptions = {}): Promise<RunningService> {
  const config = loadConfig(opts.config);
  const log = opts.log ?? createLogger({ service: def.name, level: config.logLevel, instance: config.instance });
  const metrics = new Registry();
  metrics.setDefaultLabels({ service: def.name });
  collectDefaultMetrics({ register: metrics, eventLoopMonitoringPrecision: EVENT_LOOP_MONITOR_MS });
  new Gauge({ name: 'zc_build_info', help: 'Build metadata', labelNames: ['version'], registers: [metrics] }).set({ version: '0.1.0' }, 1);

  let shuttingDown = false;
  let ready = false;
  const pool = createPool(config.databaseUrl, { max: config.dbPoolSize, applicationName: `zc-${def.name}`, statementTimeoutMs: config.statementTimeoutMs });
  if (def.migrationsDir) {
    const applied = await runMigrations(pool, def.name, def.migrationsDir, def.migrationLibraries);
    if (applied.length) log.info({ applied }, 'migrations applied');
  }
  const bus = await Bus.connect({ url: config.natsUrl, prefix: config.subjectPrefix, name: `${def.name}-${config.instance}`, log });
  bus.instrument(metrics);
  const redis = def.usesRedis ? createRedis(config.redisUrl) : (undefined as unknown as Redis);
  // The relay starts after the service's handlers: until then writes notify as ever.
  const started: { relay?: RelayHandle } = {};
  const outbox: LocalOutboxWake = {
    get leading() {
      return started.relay?.leading ?? false;
    },
    written: (rows) => started.relay?.written(rows),
  };
  const ctx: ServiceContext = { name: def.name, config, log, pool, bus, redis, metrics, outbox };
  const parts = (await def.start(ctx)) ?? {};
  const relay: RelayHandle | undefined =
    def.migrationsDir && def.relaysOutbox !== false ? startOutboxRelay({ pool, schema: def.name, bus, log, trace: config.deliveryTrace, ...(def.outboxCoalescing ? { coalesce: def.outboxCoalescing } : {}) }) : undefined;
  started.relay = relay;

  if (relay) outboxMetrics(metrics, pool, def.name);
  if (relay) {
    new Gauge({
      name: 'zc_outbox_relay_leader',
      help: '1 while this replica relays its service outbox',
      registers: [metrics],
      collect() {
        this.set(relay.isLeader ? 1 : 0);
      },
    });
  }

  const checks: Record<string, () => Promise<boolean>> = {
    nats: async () => bus.isOnline,
    ...(def.migrationsDir ? { postgres: async () => (await pool.query('SELECT 1')).rowCount === 1 } : {}),
    ...(def.usesRedis ? { redis: async () => (await redis.ping()) === 'PONG' } : {}),
    ...(parts.checks ?? {}),
  };

  let adminServer: http.Server | undefined;
  let adminPort = 0;
  if (opts.admin ?? true) {
    adminServer = http.createServer((req, res) => {
      void (async () => {
        const url = req.url?.split('?')[0];
        if (url === '/livez' || url === '/healthz') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
        } else if (url === '/readyz') {
          const results: Record<string, boolean> = {};
          // A dependency that does not answer in time is as unusable as one that refuses.
          await Promise.all(Object.entries(checks).map(async ([k, f]) => (results[k] = await withinMs(f(), READY_CHECK_TIMEOUT_MS).catch(() => false))));
          const ok = ready && !shuttingDown && Object.values(results).every(Boolean);
          res
            .writeHead(ok ? 200 : 503, { 'content-type': 'application/json' })
            .end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', shutting_down: shuttingDown, checks: results }));
        } else if (url === '/metrics') {
          res.writeHead(200, { 'content-type': metrics.contentType }).end(await metrics.metrics());
        } else {
          res.writeHead(404).end();
        }
      })().catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((resolve) => adminServer?.listen(config.adminPort, '0.0.0.0', resolve));
    adminPort = (adminServer.address() as { port: number }).port;
  }
  ready = true;
  log.info({ admin_port: adminPort }, 'service ready');

  let stopping: Promise<void> | undefined;
  return {
    ctx,
    adminPort,
    flushOutbox: async () => relay?.flush(),
    stop: () => {
      stopping ??= (async () => {
        shuttingDown = true;
        await parts.stop?.().catch((err) => log.warn({ err }, 'service stop failed'));
        await relay?.stop();
        await bus.close().catch(() => undefined);
        if (def.usesRedis) redis.disconnect();
        await pool.end().catch(() => undefined);
        await new Promise<void>((resolve) => (adminServer ? adminServer.close(() => resolve()) : resolve()));
        log.info('service stopped');
      })();
      return stopping;
    },
  };
}

/**
 * A failed start as one fatal log line (JSON like every other line, so log pipelines see it):
 * a bad configuration names each variable; anything else carries the error and its stack.
 */
function reportStartFailure(service: string, err: unknown): void {
  const level = (() => {
    try {
      return readEnv().LOG_LEVEL;
    } catch {
      return 'info';
    }
  })();
  // JSON, written synchronously: the process exits right after.
  const log = createLogger({ service, level: level === 'silent' ? 'fatal' : level, format: 'json' });
  if (err instanceof ConfigError) {
    log.fatal({ problems: err.problems }, `${service} cannot start: ${err.message}`);
  } else {
    log.fatal({ err }, `${service} failed to start: ${(err as Error)?.message ?? String(err)}`);
  }
  log.flush?.();
}

/** Process entry point: configuration check, telemetry, start, and a clean stop on SIGTERM/SIGINT. */
export async function runMain(def: ServiceDefinition): Promise<void> {
  let running: RunningService;
  try {
    // Every variable is checked before anything connects, so a typo stops the process at once.
    const env = readEnv();
    const lateTelemetry = telemetryEnabled() && !telemetryStarted();
    // Started this late, http, pg and ioredis stay unpatched (only the bus spans export).
    await startTelemetry(`zc-${def.name}`, env.ZC_INSTANCE);
    running = await startService(def);
    const unknown = unknownVariables();
    if (unknown.length) running.ctx.log.warn({ unknown }, `environment variables no service reads: ${unknown.map((u) => (u.didYouMean ? `${u.variable} (did you mean ${u.didYouMean}?)` : u.variable)).join(', ')}`);
    if (lateTelemetry) running.ctx.log.warn('OTLP endpoint set but the preload was not given: start with node --import @zc/shared/instrumentation for complete traces');
  } catch (err) {
    reportStartFailure(def.name, err);
    process.exit(1);
  }
  const shutdown = (signal: string) => {
    running.ctx.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 25_000);
    force.unref();
    void running
      .stop()
      .then(stopTelemetry)
      .then(() => process.exit(0));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

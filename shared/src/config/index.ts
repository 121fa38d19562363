/**
 * Configuration shared by every service, read from the environment once and checked against
 * the one schema of every variable (schema.ts; docs/configuration.md lists them). Every
 * variable has a default that works on one developer machine.
 */
import os from 'node:os';
import { ConfigError, readEnv } from './schema.js';

export { ConfigError, ENV_SCHEMA, envDocRows, readEnv, unknownVariables, type ConfigProblem, type Env } from './schema.js';

export interface SharedConfig {
  /** PostgreSQL connection string; each service uses its own schema in this database. */
  databaseUrl: string;
  redisUrl: string;
  natsUrl: string;
  /** First token of every NATS subject and stream name; parallel test runs use their own. */
  subjectPrefix: string;
  /** Prefix of every Redis key. */
  redisPrefix: string;
  /** Port of the admin server (/livez, /readyz, /metrics); 0 picks a free one. */
  adminPort: number;
  /** Root domain: it serves the default realm, `SUB.<root>` serves realm SUB. */
  rootDomain: string;
  /** Scheme and port the gateway is reached at, used to build realm URLs. */
  externalScheme: string;
  externalPort: number;
  /** 32-byte hex key for API-key hashing and encryption. */
  secretKey: string;
  logLevel: string;
  instance: string;
  dbPoolSize: number;
  /** Ceiling of every SQL statement (ms; 0: none); request work is cancelled at its deadline before that. */
  statementTimeoutMs: number;
  /**
   * Largest file a user may upload (Zulip's MAX_FILE_UPLOAD_SIZE): the uploads service
   * enforces it and /register announces it as `max_file_upload_size_mib`, so they agree.
   */
  maxFileUploadSizeMib: number;
  /** A realm's total upload space (`realm_upload_quota_mib`); null: unlimited (Zulip's self-hosted default). */
  realmUploadQuotaMib: number | null;
  /**
   * Whether a new human user gets Welcome Bot's direct message, as on Zulip. Clients count on
   * it: zulip-terminal cannot draw its first screen for someone with no message at all.
   */
  welcomeMessages: boolean;
  /**
   * Whether a new realm gets its "general" stream, a default stream, so that new users join it
   * as on Zulip (zulip-terminal shows a newcomer an empty stream list otherwise).
   */
  newRealmStreams: boolean;
  /** ZC_DELIVERY_TRACE: client events and GET /events answers carry per-hop timestamps (benchmarks). */
  deliveryTrace: boolean;
}

// A fixed development key: fine on a laptop, refused in production (see loadConfig).
const DEV_SECRET = '6465762d6f6e6c792d7365637265742d6b65792d6e6f742d666f722d70726f64';

/** The shared settings, from the checked environment (readEnv throws ConfigError on a bad value). */
export function loadConfig(overrides: Partial<SharedConfig> = {}, env: NodeJS.ProcessEnv = process.env): SharedConfig {
  const e = readEnv(env);
  const cfg: SharedConfig = {
    databaseUrl: e.ZC_DATABASE_URL,
    redisUrl: e.ZC_REDIS_URL,
    natsUrl: e.ZC_NATS_URL,
    subjectPrefix: e.ZC_SUBJECT_PREFIX,
    redisPrefix: e.ZC_REDIS_PREFIX ?? e.ZC_SUBJECT_PREFIX,
    adminPort: e.ZC_ADMIN_PORT,
    rootDomain: e.ZC_ROOT_DOMAIN,
    externalScheme: e.ZC_EXTERNAL_SCHEME,
    externalPort: e.ZC_EXTERNAL_PORT ?? e.ZC_GATEWAY_PORT,
    secretKey: e.ZC_SECRET_KEY ?? DEV_SECRET,
    logLevel: e.LOG_LEVEL,
    instance: e.ZC_INSTANCE ?? `${os.hostname()}-${process.pid}`,
    dbPoolSize: e.ZC_DB_POOL_SIZE,
    statementTimeoutMs: e.ZC_STATEMENT_TIMEOUT_MS,
    maxFileUploadSizeMib: e.ZC_MAX_FILE_UPLOAD_SIZE_MIB,
    realmUploadQuotaMib: e.ZC_REALM_UPLOAD_QUOTA_MIB ?? null,
    welcomeMessages: e.ZC_WELCOME_MESSAGES,
    newRealmStreams: e.ZC_NEW_REALM_STREAMS,
    deliveryTrace: e.ZC_DELIVERY_TRACE,
    ...overrides,
  };
  // Overrides (tests) are checked like the environment.
  if (!/^[a-z][a-z0-9_]*$/i.test(cfg.subjectPrefix)) {
    throw new ConfigError([{ variable: 'ZC_SUBJECT_PREFIX', message: 'must be letters, digits and underscores' }]);
  }
  if (!/^[0-9a-f]{64}$/i.test(cfg.secretKey)) throw new ConfigError([{ variable: 'ZC_SECRET_KEY', message: 'must be 64 hex digits' }]);
  if (e.NODE_ENV === 'production' && cfg.secretKey === DEV_SECRET) {
    throw new ConfigError([{ variable: 'ZC_SECRET_KEY', message: 'must be set in production (NODE_ENV=production)' }]);
  }
  return cfg;
}

/** The URL of a realm: the root domain for the default realm, `SUB.<root>` otherwise. */
export function realmUrl(cfg: SharedConfig, subdomain: string): string {
  const host = subdomain === '' ? cfg.rootDomain : `${subdomain}.${cfg.rootDomain}`;
  const defaultPort = cfg.externalScheme === 'https' ? 443 : 80;
  const port = cfg.externalPort === defaultPort ? '' : `:${cfg.externalPort}`;
  return `${cfg.externalScheme}://${host}${port}`;
}

/** The realm subdomain a Host header names; any host that is not `SUB.<root>` is the root. */
export function subdomainOfHost(cfg: SharedConfig, hostHeader: string | undefined): string {
  if (!hostHeader) return '';
  const host = hostHeader.replace(/:\d+$/, '').toLowerCase();
  const suffix = `.${cfg.rootDomain.toLowerCase()}`;
  if (host.endsWith(suffix)) return host.slice(0, -suffix.length);
  return '';
}

/**
 * Node options each service's process is started with (NODE_OPTIONS), by `npm start`, the
 * bench system, the compose file and the Helm chart alike (a test keeps the last two equal
 * to this). The gateway allocates a little for every request it answers; with V8's default
 * young generation (16 MiB semi-spaces at most) that garbage is scavenged often, on helper
 * threads as well. 32 MiB semi-spaces cut its CPU per presence ping by about a quarter on
 * this project's bench machine (presence-ping, quiet: 742 and 808 µs above idle before, 571
 * and 591 after), for at most 48 MiB more memory.
 */
export const SERVICE_NODE_OPTIONS: Readonly<Record<string, string>> = {
  gateway: '--max-semi-space-size=32',
};

/**
 * Node flags every service's process is started with, on the command line (V8 refuses these
 * in NODE_OPTIONS): by `npm start`, the bench system and the image's entry point alike (a test
 * keeps the Dockerfile equal to this; the chart and the compose file run that entry point).
 *
 * `--single-threaded-gc`: V8 collects garbage on the main thread only. By default a scavenge
 * splits its work over helper threads and the main thread waits for them; on a machine whose
 * cores are all busy (two cores shared by seven services, PostgreSQL, Redis and NATS, or a pod
 * held to its CPU limit) a helper thread may wait for a core while the request waits for it.
 * Paced fan-out (fanout-paced, 100 msg/s to 50, alternated runs on the project's noisy 2-core
 * machine, two series): delivery p50 median 42.9 ms without (10 runs), 32.5 ms with (11 runs);
 * p99 median 95 against 80 ms; CPU per delivery and burst throughput unchanged. The first
 * series alone showed a third off the p50, the second no clear difference: a modest gain.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--single-threaded-gc'];

/** NODE_OPTIONS for a service's process: the inherited ones, then the service's own. */
export function nodeOptionsFor(service: string, inherited: string | undefined): string | undefined {
  const own = SERVICE_NODE_OPTIONS[service];
  return [inherited, own].filter((o) => o !== undefined && o !== '').join(' ') || undefined;
}

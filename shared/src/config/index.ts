/**
 * Configuration shared by every service, read from the environment once. Every variable
 * has a default that works on one developer machine (README lists them).
 */
import os from 'node:os';

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
  /**
   * Largest file a user may upload (Zulip's MAX_FILE_UPLOAD_SIZE): the uploads service
   * enforces it and /register announces it as `max_file_upload_size_mib`, so they agree.
   */
  maxFileUploadSizeMib: number;
  /** A realm's total upload space (`realm_upload_quota_mib`); null: unlimited (Zulip's self-hosted default). */
  realmUploadQuotaMib: number | null;
}

function num(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
}

function optionalNum(name: string): number | null {
  const v = process.env[name];
  return v === undefined || v === '' ? null : num(name, 0);
}

function text(name: string, fallback: string): string {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
}

// A fixed development key: fine on a laptop, refused in production (see loadConfig).
const DEV_SECRET = '6465762d6f6e6c792d7365637265742d6b65792d6e6f742d666f722d70726f64';

export function loadConfig(overrides: Partial<SharedConfig> = {}): SharedConfig {
  const cfg: SharedConfig = {
    databaseUrl: text('ZC_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/zc'),
    redisUrl: text('ZC_REDIS_URL', 'redis://127.0.0.1:6379'),
    natsUrl: text('ZC_NATS_URL', 'nats://127.0.0.1:4222'),
    subjectPrefix: text('ZC_SUBJECT_PREFIX', 'zc'),
    redisPrefix: text('ZC_REDIS_PREFIX', text('ZC_SUBJECT_PREFIX', 'zc')),
    adminPort: num('ZC_ADMIN_PORT', 0),
    rootDomain: text('ZC_ROOT_DOMAIN', 'localhost'),
    externalScheme: text('ZC_EXTERNAL_SCHEME', 'http'),
    externalPort: num('ZC_EXTERNAL_PORT', num('ZC_GATEWAY_PORT', 9991)),
    secretKey: text('ZC_SECRET_KEY', DEV_SECRET),
    logLevel: text('LOG_LEVEL', 'info'),
    instance: text('ZC_INSTANCE', `${os.hostname()}-${process.pid}`),
    dbPoolSize: num('ZC_DB_POOL_SIZE', 10),
    maxFileUploadSizeMib: num('ZC_MAX_FILE_UPLOAD_SIZE_MIB', 25),
    realmUploadQuotaMib: optionalNum('ZC_REALM_UPLOAD_QUOTA_MIB'),
    ...overrides,
  };
  if (!/^[a-z][a-z0-9_]*$/i.test(cfg.subjectPrefix)) {
    throw new Error('ZC_SUBJECT_PREFIX must be letters, digits and underscores');
  }
  if (cfg.maxFileUploadSizeMib < 0) throw new Error('ZC_MAX_FILE_UPLOAD_SIZE_MIB must not be negative');
  if (cfg.realmUploadQuotaMib !== null && cfg.realmUploadQuotaMib < 0) throw new Error('ZC_REALM_UPLOAD_QUOTA_MIB must not be negative');
  if (!/^[0-9a-f]{64}$/i.test(cfg.secretKey)) throw new Error('ZC_SECRET_KEY must be 64 hex digits');
  if (process.env.NODE_ENV === 'production' && cfg.secretKey === DEV_SECRET) {
    throw new Error('ZC_SECRET_KEY must be set in production');
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

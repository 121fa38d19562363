/**
 * Every environment variable any service reads, in one TypeBox schema: its type, bounds,
 * default and meaning. `readEnv` checks the whole environment against it at start, so a bad
 * value (`ZC_RATE_LIMIT_PER_MINUTE=abc`, `ZC_AUTH_CACHE_TTL_MS=30s`, `ZC_DB_POOL_SIZE=0`)
 * stops the process with a message naming the variable instead of switching a feature off or
 * hanging. docs/configuration.md is generated from this file (scripts/config-doc.mjs).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { TYPING_TIMING } from '../contracts/version.js';

/** Which processes read a variable; shown in the generated table. */
type Scope = 'all' | 'gateway' | 'users' | 'messages' | 'subscriptions' | 'events' | 'uploads' | 'telemetry';

interface Meta {
  scope: Scope[];
  description: string;
  /** A default computed at run time, described for the table. */
  dynamicDefault?: string;
  /** Never echo the value in an error message. */
  secret?: boolean;
}

const meta = (scope: Scope[], description: string, more: Partial<Meta> = {}) => ({ 'x-zc': { scope, description, ...more } satisfies Meta });

const int = (scope: Scope[], description: string, min: number, dflt: number | undefined, max?: number, more: Partial<Meta> = {}) =>
  Type.Integer({ minimum: min, ...(max !== undefined ? { maximum: max } : {}), ...(dflt !== undefined ? { default: dflt } : {}), ...meta(scope, description, more) });
const str = (scope: Scope[], description: string, dflt: string | undefined, opts: { pattern?: string; minLength?: number } = {}, more: Partial<Meta> = {}) =>
  Type.String({ ...opts, ...(dflt !== undefined ? { default: dflt } : {}), ...meta(scope, description, more) });
const bool = (scope: Scope[], description: string, dflt: boolean) => Type.Boolean({ default: dflt, ...meta(scope, description) });
const oneOf = <T extends string>(scope: Scope[], description: string, values: readonly T[], dflt: T) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: dflt, ...meta(scope, description) },
  );

const URL_PATTERN = {
  postgres: '^postgres(ql)?://',
  redis: '^rediss?://',
  nats: '^(nats|tls|wss?)://[^,]+(,(nats|tls|wss?)://[^,]+)*$',
  http: '^https?://',
};

export const ENV_SCHEMA = Type.Object({
  // --- every service ---------------------------------------------------------------------
  ZC_DATABASE_URL: str(['all'], 'PostgreSQL connection string; each service keeps its own schema in this database.', 'postgres://postgres@127.0.0.1:5432/zc', { pattern: URL_PATTERN.postgres }, { secret: true }),
  ZC_DB_POOL_SIZE: int(['all'], 'Connections in each process\'s PostgreSQL pool.', 1, 10, 500),
  ZC_STATEMENT_TIMEOUT_MS: int(['all'], 'Longest any SQL statement may run (PostgreSQL statement_timeout of every pooled session; request work stops sooner, at its deadline); 0: no ceiling.', 0, 30_000),
  ZC_REDIS_URL: str(['all'], 'Redis connection string (event queues, rate limits, presence, typing).', 'redis://127.0.0.1:6379', { pattern: URL_PATTERN.redis }, { secret: true }),
  ZC_NATS_URL: str(['all'], 'NATS server(s), comma-separated; JetStream must be enabled.', 'nats://127.0.0.1:4222', { pattern: URL_PATTERN.nats }, { secret: true }),
  ZC_SUBJECT_PREFIX: str(['all'], 'First token of every NATS subject and stream; two deployments sharing NATS need different ones.', 'zc', { pattern: '^[A-Za-z][A-Za-z0-9_]*$' }),
  ZC_REDIS_PREFIX: str(['all'], 'Prefix of every Redis key.', undefined, { pattern: '^[A-Za-z0-9_:.-]+$' }, { dynamicDefault: 'ZC_SUBJECT_PREFIX' }),
  ZC_ADMIN_PORT: int(['all'], 'Port of the admin server (/livez, /readyz, /metrics); 0 picks a free one.', 0, 0, 65535),
  ZC_ROOT_DOMAIN: str(['all'], 'The root domain serves the default realm; SUB.<root> serves realm SUB.', 'localhost', { minLength: 1 }),
  ZC_EXTERNAL_SCHEME: oneOf(['all'], 'Scheme clients reach the gateway at (realm URLs).', ['http', 'https'] as const, 'http'),
  ZC_EXTERNAL_PORT: int(['all'], 'Port clients reach the gateway at (realm URLs).', 1, undefined, 65535, { dynamicDefault: 'ZC_GATEWAY_PORT' }),
  ZC_SECRET_KEY: str(['all'], '64 hex digits: API-key hashing and encryption. Required in production; never change it casually.', undefined, { pattern: '^[0-9a-fA-F]{64}$' }, { secret: true, dynamicDefault: 'a fixed development key (refused with NODE_ENV=production)' }),
  ZC_INSTANCE: str(['all'], 'Name of this process in logs and NATS connection names.', undefined, { minLength: 1 }, { dynamicDefault: '<hostname>-<pid>' }),
  LOG_LEVEL: oneOf(['all'], 'Log level.', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
  ZC_LOG_FORMAT: oneOf(['all'], 'json: one JSON object a line; pretty: coloured lines for a terminal (npm start picks pretty at a TTY).', ['json', 'pretty'] as const, 'json'),
  NODE_ENV: str(['all'], 'production refuses the development secret key.', 'development'),
  // --- telemetry -------------------------------------------------------------------------
  OTEL_EXPORTER_OTLP_ENDPOINT: str(['telemetry'], 'OTLP/HTTP endpoint of a collector (e.g. http://otel-collector:4318); unset: no tracing.', undefined, { pattern: URL_PATTERN.http }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: str(['telemetry'], 'OTLP/HTTP endpoint for traces only (full URL, e.g. http://otel-collector:4318/v1/traces); overrides OTEL_EXPORTER_OTLP_ENDPOINT for traces.', undefined, { pattern: URL_PATTERN.http }),
  OTEL_SDK_DISABLED: bool(['telemetry'], 'true: no tracing even with an endpoint set (OpenTelemetry\'s switch).', false),
  OTEL_RESOURCE_ATTRIBUTES: str(['telemetry'], 'Extra resource attributes on exported spans, key=value pairs separated by commas (OpenTelemetry\'s format).', undefined, { pattern: '^[^=,]+=[^,]*(,[^=,]+=[^,]*)*$' }),
  OTEL_SERVICE_NAME: str(['telemetry'], 'Service name on exported spans.', undefined, { minLength: 1 }, { dynamicDefault: 'zc-<service>' }),
  // --- gateway ---------------------------------------------------------------------------
  ZC_GATEWAY_PORT: int(['gateway'], 'Port of the public HTTP API.', 0, 9991, 65535),
  ZC_GATEWAY_HOST: str(['gateway'], 'Address the public HTTP API listens on.', '0.0.0.0', { minLength: 1 }),
  ZC_RATE_LIMIT_PER_MINUTE: int(['gateway'], 'Requests per user per minute (Zulip: 200); 0 switches per-user limiting off (load tests).', 0, 200),
  ZC_RATE_LIMIT_PER_IP_PER_MINUTE: int(['gateway'], 'Unauthenticated requests per client address per minute; 0 switches it off.', 0, 100),
  ZC_MAX_CONCURRENT_REQUESTS_PER_USER: int(['gateway'], 'Requests one user may have in progress at once on each gateway replica (long-polls aside); past it 429. 0 switches it off (load tests).', 0, 20),
  ZC_AUTH_FAILURES_PER_IP_PER_MINUTE: int(['gateway'], 'Failed authentications per client address per minute before 429; 0 switches it off.', 0, 20),
  // Longer than the 60 s presence ping and the 90 s long-poll, so a client's steady traffic is
  // answered from the cache; revocation does not wait for it (credential tokens, plugins/auth.ts).
  ZC_AUTH_CACHE_TTL_MS: int(['gateway'], 'Milliseconds a checked API key is trusted without asking the users service (revocations and role or name changes take effect at once whatever it is).', 0, 600_000, 3_600_000),
  ZC_TRUST_PROXY: str(['gateway'], 'Whose X-Forwarded-For to believe: false (nobody), true, a hop count, or comma-separated proxy addresses/CIDRs.', 'false', { pattern: '^(true|false|[0-9]+|[0-9a-fA-F:./, ]+)$' }),
  ZC_DELIVERY_TRACE: bool(['gateway', 'messages', 'events'], 'Benchmarks only: each client event carries when it passed each hop from the outbox relay to its queue (`zc_trace`), and GET /events answers with the gateway\'s own hops (`x-zc-trace`); the fanout bench scenarios print them.', false),
  ZC_ACCESS_LOG: bool(['gateway'], 'One log line per request (route, status, duration, user, trace id; long-polls marked).', true),
  // --- events ----------------------------------------------------------------------------
  ZC_HEARTBEAT_MS: int(['gateway'], 'Fixed heartbeat delay of a parked GET /events (tests); 0: Zulip\'s 45-55 s.', 0, 0),
  ZC_EVENT_QUEUE_LIFESPAN_SECS: int(['events'], 'Idle lifetime of an event queue when /register asks for none (Zulip: 600).', 1, 600),
  ZC_MAX_QUEUES_PER_USER: int(['events'], 'Live event queues one user may hold.', 1, 100),
  ZC_MAX_EVENTS_PER_QUEUE: int(['events'], 'Unacknowledged events one queue may hold before it is dropped.', 1, 10_000),
  ZC_MAX_EVENT_BYTES_PER_QUEUE: int(['events'], 'Bytes of unacknowledged event JSON one queue may hold before it is dropped (the client registers again).', 1024, 4 * 1024 * 1024),
  ZC_REGISTER_STATE_TIMEOUT_MS: int(['events'], 'How long an owning service may take to answer register_state.', 1, 10_000),
  ZC_EVENTS_LEADER_LOCK_MS: int(['events'], 'Lifetime of the events delivery leader lock (renewed and contested every second; a successor takes over within it plus a second).', 100, 6_000),
  // --- messages --------------------------------------------------------------------------
  ZC_MARK_ALL_AS_READ_TIME_LIMIT_MS: int(['messages'], 'POST /mark_all_as_read answers partially_completed after this long (0: at once).', 0, 2000),
  ZC_MARK_ALL_AS_READ_BATCH_SIZE: int(['messages'], 'Rows marked read per batch of mark_all_as_read.', 1, 5000),
  ZC_DELETE_TOPIC_TIME_LIMIT_MS: int(['messages'], 'POST /streams/{id}/delete_topic answers partially_completed after this long (0: after one batch).', 0, 10_000),
  ZC_DELETE_TOPIC_BATCH_SIZE: int(['messages'], 'Messages deleted per transaction by delete_topic (newest first).', 1, 100),
  ZC_SEND_BATCH_MAX: int(['messages'], 'Sends sharing one transaction at most.', 1, 64),
  ZC_SEARCH_WINDOW_IDS: int(['messages'], 'Ids in a keyword search\'s first window.', 1, 10_000),
  ZC_TYPING_STARTED_EXPIRY_MS: int(['messages'], 'The server sends a typing stop this long after an unrenewed start.', 1, TYPING_TIMING.startedExpiryMs),
  // --- users -----------------------------------------------------------------------------
  ZC_WELCOME_MESSAGES: bool(['users'], 'Whether each new human user gets Welcome Bot\'s direct message (Zulip does; clients expect someone new to have a message).', true),
  // --- subscriptions ---------------------------------------------------------------------
  ZC_WEB_PUBLIC_STREAMS_ENABLED: bool(['subscriptions'], 'Whether web-public streams may be created.', false),
  ZC_NEW_REALM_STREAMS: bool(['subscriptions'], 'Whether a new realm gets a "general" stream, a default stream every new user joins (Zulip does; clients expect a newcomer to have a stream).', true),
  // --- uploads ---------------------------------------------------------------------------
  ZC_UPLOADS_BACKEND: oneOf(['uploads'], 'Where uploaded files live.', ['local', 's3'] as const, 'local'),
  ZC_UPLOADS_DIR: str(['uploads'], 'Directory of the local backend.', 'var/uploads', { minLength: 1 }),
  ZC_MAX_FILE_UPLOAD_SIZE_MIB: int(['uploads', 'users'], 'Largest upload (Zulip\'s max_file_upload_size_mib).', 0, 25),
  ZC_REALM_UPLOAD_QUOTA_MIB: int(['uploads', 'users'], 'A realm\'s total upload space; unset: unlimited.', 0, undefined),
  ZC_MAX_EMOJI_FILE_SIZE_MIB: int(['uploads'], 'Largest custom emoji image.', 0, 5),
  ZC_IMAGE_MAX_PIXELS: int(['uploads'], 'Images with more pixels (every frame counted) are refused before decoding.', 1, 25_000_000),
  ZC_IMAGE_TIMEOUT_SECONDS: int(['uploads'], 'Seconds one image may take to process.', 1, 10),
  ZC_UPLOADS_HTTP_PORT: int(['uploads'], 'Port of the internal file listener the gateway streams through; 0 picks one.', 0, 0, 65535),
  ZC_UPLOADS_HTTP_HOST: str(['uploads'], 'Address of the internal file listener.', '127.0.0.1', { minLength: 1 }),
  ZC_UPLOADS_ADVERTISE_URL: str(['uploads'], 'How gateways reach this replica, e.g. http://10.0.0.7:9300.', undefined, { pattern: URL_PATTERN.http }, { dynamicDefault: 'from ZC_UPLOADS_HTTP_HOST and the bound port' }),
  ZC_UNCLAIMED_UPLOAD_GRACE_DAYS: int(['uploads'], 'Uploads no message links are deleted this many days after upload.', 0, 21),
  ZC_UPLOAD_SWEEP_INTERVAL_SECONDS: int(['uploads'], 'How often the sweeper runs; 0 switches it off.', 0, 3600),
  ZC_S3_BUCKET: str(['uploads'], 'Bucket (required with ZC_UPLOADS_BACKEND=s3).', undefined, { minLength: 1 }),
  ZC_S3_REGION: str(['uploads'], 'Bucket region.', undefined, { minLength: 1 }, { dynamicDefault: 'AWS_REGION, else us-east-1' }),
  ZC_S3_ENDPOINT: str(['uploads'], 'Endpoint of an S3-compatible server (MinIO, Ceph); unset: AWS.', undefined, { pattern: URL_PATTERN.http }),
  ZC_S3_FORCE_PATH_STYLE: bool(['uploads'], 'Path-style bucket URLs (MinIO).', false),
  ZC_S3_REDIRECT_DOWNLOADS: bool(['uploads'], 'Downloads redirect to a short-lived signed URL instead of streaming.', false),
  ZC_S3_SIGNED_URL_TTL_SECONDS: int(['uploads'], 'Lifetime of a signed download URL.', 1, 60, 604_800),
});

export type Env = Static<typeof ENV_SCHEMA>;
export type EnvName = keyof Env;

/** One bad variable: its name and what is wrong, never a secret's value. */
export interface ConfigProblem {
  variable: string;
  message: string;
}

/** Thrown when the environment does not match ENV_SCHEMA; lists every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(`invalid configuration: ${problems.map((p) => `${p.variable} ${p.message}`).join('; ')}`);
    this.name = 'ConfigError';
  }
}

function describe(schema: TSchema): string {
  const s = schema as Record<string, unknown> & { anyOf?: Array<{ const: unknown }> };
  if (s.anyOf) return `one of ${s.anyOf.map((x) => String(x.const)).join(', ')}`;
  if (s.type === 'integer') {
    const max = s.maximum === undefined ? '' : ` and <= ${String(s.maximum)}`;
    return `a whole number >= ${String(s.minimum)}${max}`;
  }
  if (s.type === 'boolean') return 'true or false';
  if (s.pattern) return `a value matching ${String(s.pattern)}`;
  return 'a non-empty value';
}

/** The text of one variable as its schema's type: numbers strictly decimal, booleans true/false/1/0/yes/no. */
function convert(schema: TSchema, raw: string): unknown {
  const s = schema as { type?: string };
  if (s.type === 'integer') return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (s.type === 'boolean') {
    if (/^(1|true|yes)$/i.test(raw)) return true;
    if (/^(0|false|no)$/i.test(raw)) return false;
    return raw;
  }
  return raw;
}

/**
 * Reads and checks the whole environment: unset or empty variables take their default (or
 * stay undefined), every set one must match its schema. Throws ConfigError naming each bad
 * variable.
 */
export function readEnv(env: NodeJS.ProcessEnv = process.env): Env {
  const out: Record<string, unknown> = {};
  const problems: ConfigProblem[] = [];
  for (const [name, schema] of Object.entries(ENV_SCHEMA.properties) as Array<[string, TSchema]>) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      if ((schema as { default?: unknown }).default !== undefined) out[name] = (schema as { default?: unknown }).default;
      continue;
    }
    const value = convert(schema, raw);
    if (Value.Check(schema, value)) out[name] = value;
    else {
      const secret = (schema as { 'x-zc'?: Meta })['x-zc']?.secret;
      problems.push({ variable: name, message: `must be ${describe(schema)}${secret ? '' : `, got ${JSON.stringify(raw)}`}` });
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return out as Env;
}

/** Rows of the generated configuration table (scripts/config-doc.mjs). */
export function envDocRows(): Array<{ name: string; scope: string; type: string; default: string; description: string }> {
  return (Object.entries(ENV_SCHEMA.properties) as Array<[string, TSchema]>).map(([name, schema]) => {
    const m = (schema as unknown as { 'x-zc': Meta })['x-zc'];
    const d = (schema as { default?: unknown }).default;
    return {
      name,
      scope: m.scope.join(', '),
      type: describe(schema).replace(/matching (.+)$/, 'matching `$1`'),
      default: d !== undefined ? `\`${String(d)}\`` : (m.dynamicDefault ?? 'unset'),
      description: m.description,
    };
  });
}

/** ZC_ variables read by tools (npm start, tests, benches), not by the services. */
const TOOLING = /^ZC_(TEST|BENCH|FUZZ|SEQUENCE|BULK)_|^ZC_(ADMIN_PORT_BASE|DEV_PASSWORD|REPLICAS|SERVICE|PYTHON_ZULIP_DIR|ZULIP_OPENAPI|ZULIP_TERMINAL_DIR)$/;

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] as number;
}

/**
 * ZC_ variables set in `env` that no service reads (a typo such as ZC_RATE_LIMT_PER_MINUTE
 * would otherwise leave the default in force without a word), each with the closest known
 * name. Reported as a warning at start rather than refused: a variable meant for a newer
 * version must not stop an older one during a rollout.
 */
export function unknownVariables(env: NodeJS.ProcessEnv = process.env): Array<{ variable: string; didYouMean?: string }> {
  const known = Object.keys(ENV_SCHEMA.properties);
  return Object.keys(env)
    .filter((name) => name.startsWith('ZC_') && !known.includes(name) && !TOOLING.test(name))
    .sort()
    .map((variable) => {
      const best = known.map((k) => ({ k, d: distance(variable, k) })).sort((x, y) => x.d - y.d)[0];
      return best && best.d <= 3 ? { variable, didYouMean: best.k } : { variable };
    });
}

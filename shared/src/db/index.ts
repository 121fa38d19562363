/**
 * PostgreSQL access: a pool per service, `Queryable` (pool or transaction client) as the
 * first argument of every store method so actions own transaction boundaries, and the
 * forward-only migration runner.
 */
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { currentDeadline, currentSignal } from '../bus/index.js';
import { clientClosedRequest } from '../errors/index.js';

// bigint columns (ids, counts) come back as numbers: every id we store is below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;
export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

const IDLE_IN_TRANSACTION_LIMIT_MS = 10_000;

/**
 * BEGIN, bounded by the deadline of the request being handled: a statement still running
 * when its caller has stopped waiting is cancelled rather than finished for nobody.
 */
function begin(mode = ''): string {
  const deadline = currentDeadline();
  if (deadline === undefined) return `BEGIN${mode}`;
  return `BEGIN${mode}; SET LOCAL statement_timeout = ${Math.max(1, Math.floor(deadline - Date.now()))}`;
}

/** How long a caller waits for a connection before the database counts as unavailable (a 503). */
const CONNECT_TIMEOUT_MS = 5_000;

export interface PoolOptions {
  max?: number;
  applicationName?: string;
  connectTimeoutMs?: number;
  /**
   * The longest any statement of this pool may run (PostgreSQL's statement_timeout for every
   * session; 0 or absent: no ceiling). Request work is bounded tighter by its deadline.
   */
  statementTimeoutMs?: number;
}

export function createPool(url: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    application_name: opts.applicationName,
    // Without it a caller waits forever for a connection while PostgreSQL is down.
    connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    keepAlive: true,
    // A transaction left open by a paused or stuck process would hold its row and advisory
    // locks (a realm's send lock among them) for as long as the pause: PostgreSQL ends it.
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_LIMIT_MS,
    ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
  });
  poolUrls.set(pool, url);
  boundByDeadline(pool, url);
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor a checked-out one (a restart terminates every session, busy or not): its pending query
  // fails with the error, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Each pool's connection string, for the cancel requests of its transactions' statements. */
const poolUrls = new WeakMap<pg.Pool, string>();

/**
 * `pool.query` (outside a transaction) while a request is handled: the statement is cancelled
 * when the request's deadline passes or its caller leaves (PostgreSQL's cancel request, sent on
 * a connection of its own, so it works even when every pooled connection is busy), rather than
 * running on for a caller that has gone. Without either it is the pool's plain query.
 * Transactions bound their statements with SET LOCAL statement_timeout instead (begin()), and
 * are cancelled when the caller leaves too (cancelOnLeave).
 */
function boundByDeadline(pool: pg.Pool, url: string): void {
  const plain = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  const bounded = async (...args: unknown[]): Promise<unknown> => {
    const deadline = currentDeadline();
    const signal = currentSignal();
    if ((deadline === undefined && signal === undefined) || typeof args[args.length - 1] === 'function') return plain(...args);
    if (signal?.aborted) throw clientClosedRequest();
    const client = await pool.connect();
    const run = client.query.bind(client) as (...a: unknown[]) => Promise<unknown>;
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      cancelQuery(url, client);
    };
    const timer = deadline !== undefined ? setTimeout(cancel, Math.max(0, deadline - Date.now())) : undefined;
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await run(...args);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      // A cancel that arrives after its statement ended could hit the next one on this
      // connection: the connection is closed instead of going back to the pool.
      client.release(cancelled);
    }
  };
  (pool as unknown as { query: typeof bounded }).query = bounded;
}

/**
 * While `client` runs a transaction for a request whose caller may leave: when it does, the
 * statement running is cancelled (the transaction then fails and rolls back). Returns whether a
 * cancel was sent, to close the connection rather than pool it (the cancel could land late).
 */
function cancelOnLeave(pool: pg.Pool, client: pg.PoolClient): () => boolean {
  const signal = currentSignal();
  const url = poolUrls.get(pool);
  if (signal === undefined || url === undefined) return () => false;
  let cancelled = false;
  const cancel = () => {
    cancelled = true;
    cancelQuery(url, client);
  };
  signal.addEventListener('abort', cancel, { once: true });
  return () => {
    signal.removeEventListener('abort', cancel);
    return cancelled;
  };
}

/**
 * PostgreSQL's CancelRequest for whatever `client`'s session is running: a 16-byte message on
 * a connection of its own (no authentication, no pool slot). Best effort: the statement
 * timeout of the pool still bounds a statement whose cancel is lost.
 */
function cancelQuery(url: string, client: pg.PoolClient): void {
  const { processID, secretKey } = client as unknown as { processID: number | null; secretKey: number | null };
  if (processID === null || secretKey === null) return;
  const { host, port } = new pg.Client({ connectionString: url });
  const msg = Buffer.alloc(16);
  msg.writeInt32BE(16, 0);
  msg.writeInt32BE(80877102, 4);
  msg.writeInt32BE(processID, 8);
  msg.writeInt32BE(secretKey, 12);
  const socket = host.startsWith('/') ? net.connect(`${host}/.s.PGSQL.${port}`) : net.connect(port, host);
  socket.on('error', () => undefined);
  socket.on('connect', () => socket.end(msg));
  socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy());
}

/** Runs `fn` in one transaction; rolls back if it throws. */
export async function transaction<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  if (currentSignal()?.aborted) throw clientClosedRequest();
  const client = await pool.connect();
  const stopWatching = cancelOnLeave(pool, client);
  try {
    await client.query(begin());
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release(stopWatching());
  }
}

/** Unique-constraint violation, mapped by actions to their own errors. */
/**
 * A numeric or boolean array as PostgreSQL's array literal text (`{1,2,NULL}`), for a parameter
 * cast to `bigint[]`, `int[]` or `boolean[]` in SQL. node-postgres formats a JS array element by
 * element and puts each one, numbers too, through two regex replaces and quoting: for the
 * thousands of ids of a bulk insert that was a send's largest CPU cost in the driver.
 */
export function sqlArray(values: ReadonlyArray<number | boolean | null>): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    if (v === null || v === undefined) out += 'NULL';
    else if (typeof v === 'boolean') out += v ? 't' : 'f';
    else if (Number.isFinite(v)) out += String(v);
    else throw new TypeError(`not a number for a SQL array: ${String(v)}`);
  }
  return `${out}}`;
}

export function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === '23505';
}

const OUTBOX_DDL = (schema: string) => `
  CREATE TABLE IF NOT EXISTS "${schema}".outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subject text NOT NULL,
    payload jsonb NOT NULL,
    trace_carrier jsonb,
    -- The writing transaction, so /register can tell which events its state snapshot already holds.
    txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
    created_at timestamptz NOT NULL DEFAULT now()
  );
  -- Events the bus can never carry (over NATS's max_payload even compressed): kept for an
  -- operator, out of the relay's way.
  CREATE TABLE IF NOT EXISTS "${schema}".outbox_dead (
    id bigint PRIMARY KEY,
    subject text NOT NULL,
    payload jsonb NOT NULL,
    trace_carrier jsonb,
    txid bigint NOT NULL,
    created_at timestamptz NOT NULL,
    reason text NOT NULL,
    dead_at timestamptz NOT NULL DEFAULT now()
  );
  -- A transaction that set zc.outbox_quiet tells the relay itself (outbox LocalOutboxWake).
  CREATE OR REPLACE FUNCTION "${schema}".outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF current_setting('zc.outbox_quiet', true) IS DISTINCT FROM 'on' THEN PERFORM pg_notify('${schema}_outbox', ''); END IF;
    RETURN NULL;
  END $$;
  DROP TRIGGER IF EXISTS outbox_notify ON "${schema}".outbox;
  CREATE TRIGGER outbox_notify AFTER INSERT ON "${schema}".outbox
    FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".outbox_notify();
`;

/**
 * Creates the service's schema, its outbox, and applies `migrations/NNNN_name.sql` files not
 * yet recorded, each in its own transaction, under an advisory lock so replicas starting
 * together apply each file once.
 */
/**
 * Migrations a shared library (e.g. @zc/shared/directory) gives every service that uses it.
 * They run in the using service's schema (as its `search_path`, so their SQL names no
 * schema), before the service's own files, recorded as `<name>/<version>`.
 */
export interface MigrationLibrary {
  name: string;
  migrations: ReadonlyArray<{ version: string; sql: string }>;
}

export async function runMigrations(pool: pg.Pool, schema: string, dir: string, libraries: readonly MigrationLibrary[] = []): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS "${schema}".schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    await client.query(OUTBOX_DDL(schema));
    const done = new Set(
      (await client.query<{ version: string }>(`SELECT version FROM "${schema}".schema_migrations`)).rows.map((r) => r.version),
    );
    const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    const pending = [
      ...libraries.flatMap((l) => l.migrations.map((m) => ({ file: `${l.name}/${m.version}`, sql: async () => m.sql, library: true }))),
      ...files.map((f) => ({ file: f, sql: () => readFile(path.join(dir, f), 'utf8'), library: false })),
    ];
    for (const { file, sql: load, library } of pending) {
      if (done.has(file)) continue;
      const sql = await load();
      await client.query('BEGIN');
      try {
        // A migration (an index on a big table) may take as long as it needs.
        await client.query('SET LOCAL statement_timeout = 0');
        if (library) await client.query(`SET LOCAL search_path TO "${schema}"`);
        await client.query(sql);
        await client.query(`INSERT INTO "${schema}".schema_migrations(version) VALUES ($1)`, [file]);
        await client.query('COMMIT');
        applied.push(file);
      } catch (e) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${schema}/${file} failed: ${(e as Error).message}`);
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [`migrate:${schema}`]).catch(() => undefined);
    client.release();
  }
  return applied;
}

/**
 * Runs `fn` in a read-only REPEATABLE READ transaction and returns the PostgreSQL snapshot it
 * read from (`xmin:xmax:xip,...`). With the writing transaction id carried on every outbox
 * event, `isVisibleInSnapshot` tells whether an event's change is already in what `fn` read.
 */
export async function readWithSnapshot<T>(pool: pg.Pool, fn: (q: pg.PoolClient) => Promise<T>): Promise<{ snapshot: string; result: T }> {
  if (currentSignal()?.aborted) throw clientClosedRequest();
  const client = await pool.connect();
  const stopWatching = cancelOnLeave(pool, client);
  try {
    await client.query(begin(' ISOLATION LEVEL REPEATABLE READ READ ONLY'));
    const { rows } = await client.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s');
    const result = await fn(client);
    await client.query('COMMIT');
    return { snapshot: rows[0]?.s as string, result };
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release(stopWatching());
  }
}

/** Whether transaction `txid` had committed in `snapshot` (PostgreSQL's pg_visible_in_snapshot, in JS). */
export function isVisibleInSnapshot(txid: number, snapshot: string): boolean {
  const [xmin, xmax, xip] = snapshot.split(':');
  if (txid < Number(xmin)) return true;
  if (txid >= Number(xmax)) return false;
  return !(xip ?? '').split(',').filter(Boolean).map(Number).includes(txid);
}

/**
 * PostgreSQL access: a pool per service, `Queryable` (pool or transaction client) as the
 * first argument of every store method so actions own transaction boundaries, and the
 * forward-only migration runner.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { currentDeadline } from '../bus/index.js';

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

export function createPool(url: string, opts: { max?: number; applicationName?: string; connectTimeoutMs?: number } = {}): pg.Pool {
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
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => undefined);
  // Nor a checked-out one (a restart terminates every session, busy or not): its pending query
  // fails with the error, and the pool drops the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Runs `fn` in one transaction; rolls back if it throws. */
export async function transaction<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin());
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/** Unique-constraint violation, mapped by actions to their own errors. */
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
  CREATE OR REPLACE FUNCTION "${schema}".outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN PERFORM pg_notify('${schema}_outbox', ''); RETURN NULL; END $$;
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
  const client = await pool.connect();
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
    client.release();
  }
}

/** Whether transaction `txid` had committed in `snapshot` (PostgreSQL's pg_visible_in_snapshot, in JS). */
export function isVisibleInSnapshot(txid: number, snapshot: string): boolean {
  const [xmin, xmax, xip] = snapshot.split(':');
  if (txid < Number(xmin)) return true;
  if (txid >= Number(xmax)) return false;
  return !(xip ?? '').split(',').filter(Boolean).map(Number).includes(txid);
}

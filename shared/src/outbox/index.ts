/**
 * The transactional outbox (DESIGN.md): a state change and its event are written in one
 * transaction; the relay publishes rows to JetStream in id order with `Nats-Msg-Id` =
 * `<schema>:<id>`, so a crash between publish and delete only causes a duplicate that
 * JetStream drops. One replica at a time relays (a session advisory lock), which keeps the
 * order of a service's events equal to the order of its outbox ids.
 */
import type { Static } from '@sinclair/typebox';
import type pg from 'pg';
import type { Bus, EventContract } from '../bus/index.js';
import type { Queryable } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { injectTraceHeaders } from '../telemetry/index.js';

/** Headers on every relayed event: the service (schema) that wrote it and its transaction id. */
export const ORIGIN_HEADER = 'Zc-Origin';
export const TXID_HEADER = 'Zc-Txid';

/** Writes `payload` for `c` into the outbox of `schema`, inside the caller's transaction. */
export async function addToOutbox<C extends EventContract>(
  q: Queryable,
  schema: string,
  c: C,
  payload: Static<C['payload']>,
): Promise<void> {
  await q.query(`INSERT INTO "${schema}".outbox(subject, payload, trace_carrier) VALUES ($1, $2, $3)`, [
    c.subject,
    JSON.stringify(payload),
    JSON.stringify(injectTraceHeaders({})),
  ]);
}

export interface RelayHandle {
  stop(): Promise<void>;
  /** Relays whatever is pending now (tests and shutdown). */
  flush(): Promise<void>;
}

interface OutboxRow {
  id: number;
  txid: number;
  subject: string;
  /** The JSON text as stored: published as is, never parsed here. */
  payload: string;
  trace_carrier: Record<string, string> | null;
}

/** Rows relayed per pass at most. */
const RELAY_BATCH = 500;

export function startOutboxRelay(opts: { pool: pg.Pool; schema: string; bus: Bus; log: Logger; pollMs?: number }): RelayHandle {
  const { pool, schema, bus } = opts;
  const log = opts.log.child({ component: 'outbox-relay', schema });
  let stopped = false;
  let leaderClient: pg.PoolClient | undefined;
  let wake: (() => void) | undefined;
  // Set by a NOTIFY that arrives while a pass is running, so the next pass starts at once.
  let dirty = false;
  let running: Promise<void> = Promise.resolve();
  const ensuredServices = new Set<string>();
  // Rows published but not yet deleted: the next pass's statement deletes them as it reads the
  // following rows, so a pass is one round trip instead of two (a publish is only ever followed
  // by its delete, never preceded, so a crash in between still only causes duplicates that
  // JetStream drops by message id).
  let published: number[] = [];

  async function relayBatch(): Promise<number> {
    const { rows } = await pool.query<OutboxRow>(
      `WITH relayed AS (DELETE FROM "${schema}".outbox WHERE id = ANY($1::bigint[]))
       SELECT id, txid, subject, payload::text AS payload, trace_carrier FROM "${schema}".outbox
       WHERE NOT (id = ANY($1::bigint[])) ORDER BY id LIMIT ${RELAY_BATCH}`,
      [published],
    );
    published = [];
    if (rows.length === 0) return 0;
    for (const r of rows) {
      const [service, kind] = r.subject.split('.');
      const key = `${service}.${kind}`;
      if (!ensuredServices.has(key)) {
        await bus.ensureStream(service as string, kind === 'inbox' ? 'inbox' : 'evt');
        ensuredServices.add(key);
      }
    }
    // Publishes are sent in order on one connection; awaiting them together keeps the order.
    await Promise.all(
      rows.map((r) =>
        bus.publishRaw(bus.subject(r.subject), r.payload, `${schema}:${r.id}`, {
          ...(r.trace_carrier ?? {}),
          [ORIGIN_HEADER]: schema,
          [TXID_HEADER]: String(r.txid),
        }),
      ),
    );
    // Exactly the rows published are deleted (by the next pass): a row with a smaller id whose
    // transaction committed after the SELECT must stay for the next pass (ids are taken at
    // insert, not at commit).
    published = rows.map((r) => r.id);
    return rows.length;
  }

  /** Deletes what was published and not yet deleted. */
  async function settle(): Promise<void> {
    if (published.length === 0) return;
    await pool.query(`DELETE FROM "${schema}".outbox WHERE id = ANY($1::bigint[])`, [published]);
    published = [];
  }

  /**
   * Relays until a pass comes back short of a full batch. Rows committed after a pass's read
   * announce themselves with a NOTIFY that sets `dirty`, so stopping there loses nothing; the
   * last pass's rows are deleted by the next pass (the next NOTIFY or poll).
   */
  async function drain(): Promise<void> {
    while (!stopped && (await relayBatch()) === RELAY_BATCH) {
      /* keep going while batches come back full */
    }
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (!leaderClient) {
          const c = await pool.connect();
          const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`outbox:${schema}`]);
          if (rows[0]?.ok) {
            leaderClient = c;
            c.on('notification', () => {
              dirty = true;
              wake?.();
            });
            c.on('error', () => {
              leaderClient = undefined;
            });
            await c.query(`LISTEN ${schema}_outbox`);
            log.info('outbox relay is leader');
          } else {
            c.release();
          }
        }
        if (leaderClient) {
          dirty = false;
          running = drain();
          await running;
        }
      } catch (err) {
        log.warn({ err }, 'outbox relay pass failed; retrying');
        if (leaderClient) {
          leaderClient.release(true);
          leaderClient = undefined;
        }
      }
      if (stopped) break;
      if (dirty && leaderClient) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, leaderClient ? (opts.pollMs ?? 1000) : 2000);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  const loopDone = loop();
  return {
    async flush() {
      await running;
      await drain();
      await settle();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loopDone;
      await running.catch(() => undefined);
      await settle().catch(() => undefined);
      if (leaderClient) {
        await leaderClient.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
        leaderClient.release();
        leaderClient = undefined;
      }
    },
  };
}

/**
 * The transactional outbox (DESIGN.md): a state change and its event are written in one
 * transaction; the relay publishes rows to JetStream in id order with `Nats-Msg-Id` =
 * `<schema>:<id>`, so a crash between publish and delete only causes a duplicate that
 * JetStream drops. One replica at a time relays (a session advisory lock), which keeps the
 * order of a service's events equal to the order of its outbox ids.
 */
import type { Static } from '@sinclair/typebox';
import type pg from 'pg';
import { EventTooLarge, MAX_EVENT_BYTES, eventWireBytes, type Bus, type EventContract } from '../bus/index.js';
import { changeTooLarge } from '../errors/index.js';
import { sqlArray, type Queryable } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { injectTraceHeaders, traceClockMs } from '../telemetry/index.js';
import { OutboxVacuum, type OutboxVacuumOptions } from './vacuum.js';

/** Headers on every relayed event: the service (schema) that wrote it and its transaction id. */
export const ORIGIN_HEADER = 'Zc-Origin';
export const TXID_HEADER = 'Zc-Txid';
/** With ZC_DELIVERY_TRACE: when the relay read the row (wall-clock ms, fractional). */
export const TRACE_READ_HEADER = 'Zc-Trace-Read';

/**
 * Writes `payload` for `c` into the outbox of `schema`, inside the caller's transaction.
 * An event too large for the bus even gzipped is refused here with a 400 (the transaction
 * rolls back, the caller is told): written, it could only be moved aside by the relay, and
 * whoever should have heard of the change never would. Producers of long lists split them
 * into several events first (subscriptions: `inChunks`).
 */
export async function addToOutbox<C extends EventContract>(
  q: Queryable,
  schema: string,
  c: C,
  payload: Static<C['payload']>,
): Promise<void> {
  const json = JSON.stringify(payload);
  if (json.length > MAX_EVENT_BYTES / 4 && (await eventWireBytes(json)) > MAX_EVENT_BYTES) throw changeTooLarge();
  await q.query(`INSERT INTO "${schema}".outbox(subject, payload, trace_carrier) VALUES ($1, $2, $3)`, [
    c.subject,
    json,
    JSON.stringify(injectTraceHeaders({})),
  ]);
}

/** Rows per statement in `addManyToOutbox` (two text parameters each, whatever the count). */
const MANY_CHUNK = 2_000;

/**
 * Writes several events into the outbox of `schema` in one statement per MANY_CHUNK, in the
 * order given (their ids, hence the relay's order, follow it): a change that makes thousands
 * of events (a subscribe call creating many streams) costs a few round trips, not thousands.
 * Each event is checked as `addToOutbox` checks it.
 */
export async function addManyToOutbox(q: Queryable, schema: string, events: ReadonlyArray<{ c: EventContract; payload: unknown }>): Promise<void> {
  if (events.length === 0) return;
  const subjects: string[] = [];
  const payloads: string[] = [];
  for (const e of events) {
    const json = JSON.stringify(e.payload);
    if (json.length > MAX_EVENT_BYTES / 4 && (await eventWireBytes(json)) > MAX_EVENT_BYTES) throw changeTooLarge();
    subjects.push(e.c.subject);
    payloads.push(json);
  }
  const carrier = JSON.stringify(injectTraceHeaders({}));
  for (let i = 0; i < subjects.length; i += MANY_CHUNK) {
    // Identity values are drawn as the ordered rows are inserted, so ids follow `n`.
    await q.query(
      `INSERT INTO "${schema}".outbox(subject, payload, trace_carrier)
       SELECT s, p::jsonb, $3::jsonb FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS e(s, p, n) ORDER BY n`,
      [subjects.slice(i, i + MANY_CHUNK), payloads.slice(i, i + MANY_CHUNK), carrier],
    );
  }
}

/**
 * Rows of `subject` that the relay publishes together, as one event of `into` whose payload is
 * `{"<field>": [each row's payload, in id order]}`: events one consumer counts (statistics) and
 * nobody waits for, written once per change, cost a JetStream message, a delivery and an
 * acknowledgement each. The relay holds such rows (unpublished, undeleted) for up to `lingerMs`
 * after the first, or until `max` wait, and publishes them where the next row of the same
 * stream would go, so the stream's order is kept: a row of another subject in that stream
 * first publishes the held ones, then itself. Other streams' rows are not held back.
 * At-least-once as ever: a leader that stops after publishing a run and before deleting it lets
 * its successor publish those rows again, perhaps in another run, so consumers must count each
 * row once by its own identity (as they must for any redelivery).
 */
export interface OutboxCoalescing {
  subject: string;
  into: string;
  field: string;
  lingerMs: number;
  /** Rows in one published event at most (keep it well under the bus's payload limit). */
  max: number;
}

/**
 * A writer in the relay leader's own process may leave out its transaction's NOTIFY and wake
 * the relay itself once the transaction has committed. The NOTIFY cost the leader a wake-up
 * of its own (PostgreSQL's notification arrives on the leader's session apart from the
 * writer's result) and PostgreSQL its notification work, on every send at low rates.
 * Such a transaction sets `zc.outbox_quiet` to 'on' locally (set_config(..., true)), which the
 * outbox trigger reads. Nothing is lost when leadership moves meanwhile: `written` then
 * notifies the new leader itself, and every relay also polls.
 *
 * The writer may also hand over the rows it committed (`HandedOutboxRow`), so that the relay
 * need not read them back: see `written`.
 */
export interface LocalOutboxWake {
  /** Whether this replica leads its relay now: only then may a write leave its NOTIFY out. */
  readonly leading: boolean;
  /**
   * A write that left its NOTIFY out has committed: relay it now. `rows`, when given, are
   * every row that write put in the outbox, in id order, exactly as stored (the payload's JSON
   * may differ in spacing and key order, not in value). The relay publishes them as they are,
   * without a round trip to read them, when nothing can come between them and what it has
   * already read: their ids follow on from the highest id it has seen, and its own session
   * read the outbox within the poll interval (which also bounds how long published rows wait
   * for their delete, and proves the lock is still held). Otherwise it reads, as without rows.
   */
  written(rows?: readonly HandedOutboxRow[]): void;
}

/** A committed outbox row as its writer knows it (see LocalOutboxWake.written). */
export interface HandedOutboxRow {
  id: number;
  /** The writing transaction's id (the row's `txid`). */
  txid: number;
  subject: string;
  /** The payload's JSON text. */
  payload: string;
  trace_carrier: Record<string, string> | null;
}

export interface RelayHandle extends LocalOutboxWake {
  /** Whether this replica holds the relay's lock now (metrics, fault tests). */
  readonly isLeader: boolean;
  stop(): Promise<void>;
  /** Relays whatever is pending now (tests and shutdown). */
  flush(): Promise<void>;
}

/** A row as the relay reads it: the JSON text as stored, published as is, never parsed here. */
type OutboxRow = HandedOutboxRow;

/** Rows relayed per pass at most. */
const RELAY_BATCH = 500;

/**
 * The leader's session ends after this much idleness (PostgreSQL's idle_session_timeout), which
 * frees its advisory lock: a paused or partitioned leader stops blocking delivery after this
 * long, and another replica takes over.
 */
const LEADER_IDLE_LIMIT_MS = 5_000;
/**
 * Fencing: a pass publishes only while its read, on the leader's session, is younger than this.
 * Until then PostgreSQL cannot have ended the session, so the lock (and the right to publish
 * these rows in this order) is still ours; a leader that wakes from a pause later drops the
 * rows it read instead of publishing them late, after its successor's.
 */
const LEADER_LEASE_MS = LEADER_IDLE_LIMIT_MS - 1_500;

interface Leader {
  client: pg.PoolClient;
  /** The session failed (PostgreSQL restart, idle timeout): it must be destroyed, not reused. */
  broken: boolean;
}

/** `service.kind` of a subject (`messages.evt.v1.message.sent` → `messages.evt`): the JetStream stream it goes to. */
const streamOf = (subject: string): string => subject.split('.', 2).join('.');

export function startOutboxRelay(opts: {
  pool: pg.Pool;
  schema: string;
  bus: Bus;
  log: Logger;
  pollMs?: number;
  coalesce?: readonly OutboxCoalescing[];
  /** Stamp each event with TRACE_READ_HEADER (ZC_DELIVERY_TRACE). */
  trace?: boolean;
  /** When the relay vacuums its outbox (vacuum.ts). */
  vacuum?: OutboxVacuumOptions;
}): RelayHandle {
  const { pool, schema, bus } = opts;
  const coalescing = new Map((opts.coalesce ?? []).map((c) => [c.subject, c]));
  const coalescedStreams = new Map([...coalescing.values()].map((c) => [streamOf(c.subject), c]));
  const log = opts.log.child({ component: 'outbox-relay', schema });
  const vacuum = new OutboxVacuum(pool, schema, log, opts.vacuum);
  let stopped = false;
  let leader: Leader | undefined;
  let wake: (() => void) | undefined;
  // Set by a NOTIFY that arrives while a pass is running, so the next pass starts at once.
  let dirty = false;
  // Rows handed over by writers of this process (LocalOutboxWake.written), not yet relayed.
  let handed: OutboxRow[] = [];
  // The highest id the leader has read or relayed, and when its session last read the outbox
  // (performance.now()): what decides whether handed rows may skip the read.
  let seenId: number | undefined;
  let readAt = -Infinity;
  let running: Promise<void> = Promise.resolve();
  const ensuredServices = new Set<string>();
  // Rows published but not yet deleted: the next pass's statement deletes them as it reads the
  // following rows, so a pass is one round trip instead of two (a publish is only ever followed
  // by its delete, never preceded, so a crash in between still only causes duplicates that
  // JetStream drops by message id).
  let published: number[] = [];
  // Rows held for coalescing (see OutboxCoalescing), in id order, with when the first was read.
  // Read once: later passes skip them in their read (they are neither published nor deleted).
  let held: OutboxRow[] = [];
  let heldSince = 0;

  /**
   * Gives up leadership. The session is closed, which frees its lock, and never goes back to the
   * pool: it carries settings of its own (synchronous_commit off, the idle timeout, generic
   * plans, LISTEN), and a send written on a pooled session with synchronous_commit off would
   * be acknowledged before it is durable.
   */
  function resign(): void {
    const l = leader;
    if (!l) return;
    leader = undefined;
    published = [];
    held = [];
    handed = [];
    seenId = undefined;
    l.client.release(true);
  }

  /** Takes the lock if it is free; every path releases the client it checked out. */
  async function tryLead(): Promise<void> {
    const c = await pool.connect();
    try {
      const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [`outbox:${schema}`]);
      if (!rows[0]?.ok) {
        c.release();
        return;
      }
      await c.query(`SET idle_session_timeout = ${LEADER_IDLE_LIMIT_MS}`);
      // The leader's only writes delete rows already published (and move unpublishable ones
      // aside). Waiting for their WAL flush put a disk flush (5 ms here, more under load)
      // between every commit's NOTIFY and its publish, since each pass deletes the previous
      // pass's rows in the statement that reads the new ones. Not waiting risks only what a
      // crash between publish and delete already risks: after a PostgreSQL crash the last
      // deletes may be undone, and those rows are published again under the same message id,
      // which JetStream drops.
      await c.query('SET synchronous_commit = off');
      // The pass statement's plan is the same whatever its arrays hold (the primary key, in id
      // order), but PostgreSQL, guessing their sizes, kept planning it afresh at every bind:
      // 0.32 ms a pass at 100 sends/s (log_min_duration_statement), as long as its execution.
      await c.query('SET plan_cache_mode = force_generic_plan');
      const l: Leader = { client: c, broken: false };
      c.on('notification', () => {
        dirty = true;
        wake?.();
      });
      c.on('error', (err) => {
        l.broken = true;
        log.warn({ err }, 'outbox relay lost its database session');
        wake?.();
      });
      await c.query(`LISTEN ${schema}_outbox`);
      leader = l;
      log.info('outbox relay is leader');
    } catch (err) {
      c.release(true);
      throw err;
    }
  }

  /** Rows that can never be published (over the server's max_payload) move aside, logged. */
  async function deadLetter(client: pg.PoolClient, rows: Array<{ id: number; reason: string }>): Promise<void> {
    for (const r of rows) log.error({ outbox_id: r.id, reason: r.reason }, 'outbox event can never be published; moved to outbox_dead');
    await client.query(
      `WITH moved AS (DELETE FROM "${schema}".outbox WHERE id = ANY($1::bigint[]) RETURNING *)
       INSERT INTO "${schema}".outbox_dead (id, subject, payload, trace_carrier, txid, created_at, reason)
       SELECT m.id, m.subject, m.payload, m.trace_carrier, m.txid, m.created_at, r.reason
       FROM moved m JOIN unnest($1::bigint[], $2::text[]) AS r(id, reason) ON r.id = m.id`,
      [rows.map((r) => r.id), rows.map((r) => r.reason)],
    );
  }

  /**
   * The rows of a pass in publishing order, the held ones folded in: a coalesced row is held;
   * the held run goes out as one event before the next row of its stream, or at the end of the
   * pass when it is due (`flushAll`, or lingered long enough, or full).
   */
  function publishingOrder(rows: readonly OutboxRow[], flushAll: boolean): Array<OutboxRow | OutboxRow[]> {
    const out: Array<OutboxRow | OutboxRow[]> = [];
    const release = () => {
      if (held.length) out.push(held);
      held = [];
    };
    for (const r of rows) {
      const c = coalescing.get(r.subject);
      if (c) {
        if (held.length && held[0]?.subject !== r.subject) release();
        if (held.length === 0) heldSince = performance.now();
        held.push(r);
        if (held.length >= c.max) release();
      } else {
        if (held.length && coalescedStreams.has(streamOf(r.subject))) release();
        out.push(r);
      }
    }
    const c = held[0] && coalescing.get(held[0].subject);
    if (c && (flushAll || performance.now() - heldSince >= c.lingerMs)) release();
    return out;
  }

  /** A held run as one row of its `into` subject (the payloads spliced as stored, not parsed). */
  function coalesced(run: readonly OutboxRow[]): { row: OutboxRow; msgId: string } {
    const first = run[0] as OutboxRow;
    const last = run[run.length - 1] as OutboxRow;
    const c = coalescing.get(first.subject) as OutboxCoalescing;
    const payload = `{${JSON.stringify(c.field)}:[${run.map((r) => r.payload).join(',')}]}`;
    // The newest transaction's id and no trace: the event stands for several changes.
    return { row: { ...last, subject: c.into, payload, trace_carrier: null }, msgId: `${schema}:${first.id}-${last.id}:${run.length}` };
  }

  async function relayBatch(l: Leader, flushAll = false): Promise<number> {
    const started = performance.now();
    // Named: the leader's session parses and plans its pass statement once, not on every pass.
    const { rows } = await l.client.query<OutboxRow>({
      name: `outbox-relay-pass-${schema}`,
      text: `WITH relayed AS (DELETE FROM "${schema}".outbox WHERE id = ANY($1::bigint[]))
       SELECT id, txid, subject, payload::text AS payload, trace_carrier FROM "${schema}".outbox
       WHERE NOT (id = ANY($1::bigint[])) AND NOT (id = ANY($2::bigint[])) ORDER BY id LIMIT ${RELAY_BATCH}`,
      values: [sqlArray(published), sqlArray(held.map((r) => r.id))],
    });
    readAt = started;
    vacuum.deleted(published.length);
    published = [];
    for (const r of rows) if (seenId === undefined || r.id > seenId) seenId = r.id;
    await publishRows(l, rows, flushAll);
    return rows.length;
  }

  /**
   * Publishes rows committed in the outbox (read by this pass, or handed over) with the held
   * ones folded in; they are deleted by the next pass. The leader's session must have read the
   * outbox recently enough (`readAt`) to prove the lock is still ours.
   */
  async function publishRows(l: Leader, rows: readonly OutboxRow[], flushAll: boolean): Promise<void> {
    const traced: Record<string, string> = opts.trace ? { [TRACE_READ_HEADER]: String(traceClockMs()) } : {};
    const order = publishingOrder(rows, flushAll);
    if (order.length === 0) return;
    const units = order.map((u) => (Array.isArray(u) ? { ...coalesced(u), ids: u.map((r) => r.id) } : { row: u, msgId: `${schema}:${u.id}`, ids: [u.id] }));
    for (const { row: r } of units) {
      const [service, kind] = r.subject.split('.');
      const key = `${service}.${kind}`;
      if (!ensuredServices.has(key)) {
        await bus.ensureStream(service as string, kind === 'inbox' ? 'inbox' : 'evt');
        ensuredServices.add(key);
      }
    }
    // Encoded first, then sent in order on one connection (awaiting the acks together keeps it).
    // A row the server can never take must not block the rows behind it: it is left out before
    // anything is sent, so the others' order is unchanged.
    const dead: Array<{ id: number; reason: string }> = [];
    const ready: Array<{ r: OutboxRow; msgId: string; ids: number[]; e: Awaited<ReturnType<Bus['encodeEvent']>> }> = [];
    for (const { row: r, msgId, ids } of units) {
      try {
        ready.push({ r, msgId, ids, e: await bus.encodeEvent(r.payload, { ...(r.trace_carrier ?? {}), [ORIGIN_HEADER]: schema, [TXID_HEADER]: String(r.txid), ...traced }) });
      } catch (err) {
        if (!(err instanceof EventTooLarge)) throw err;
        for (const id of ids) dead.push({ id, reason: err.message });
      }
    }
    // Held rows were read by an earlier pass; a read on the same session since is what shows
    // the lock, hence the right to publish them now, is still ours.
    if (performance.now() - readAt > LEADER_LEASE_MS || l.broken) throw new Error('outbox relay lease expired before publishing');
    await Promise.all(ready.map(({ r, e, msgId }) => bus.publishEncoded(bus.subject(r.subject), e, msgId)));
    if (dead.length) await deadLetter(l.client, dead);
    // Exactly the rows published are deleted (by the next pass): a row with a smaller id whose
    // transaction committed after the SELECT must stay for the next pass (ids are taken at
    // insert, not at commit).
    for (const x of ready) published.push(...x.ids);
  }

  /**
   * Relays the handed rows without reading them when that is the same as reading them (see
   * LocalOutboxWake.written); true when it did. A NOTIFY (another writer's commit), a gap in
   * the ids (a row in between, perhaps not committed yet), a handed row below the highest id
   * seen that no pass has read (it committed after a later one was read), or a read longer ago
   * than the poll interval make the caller read instead, which finds the handed rows too.
   */
  async function relayHanded(l: Leader, notified: boolean): Promise<boolean> {
    const given = handed;
    handed = [];
    if (notified || seenId === undefined || performance.now() - readAt >= Math.min(opts.pollMs ?? 1000, LEADER_LEASE_MS)) return false;
    const seen = seenId;
    const rows = given.filter((r) => r.id > seen);
    // Read by a pass already: published and not yet deleted, or held.
    const late = given.some((r) => r.id <= seen && !published.includes(r.id) && !held.some((h) => h.id === r.id));
    if (late) return false;
    if (rows.length === 0) return true;
    let next = seenId + 1;
    for (const r of rows) if (r.id !== next++) return false;
    seenId = next - 1;
    await publishRows(l, rows, false);
    return true;
  }

  /** When the held rows are due (ms from now), or undefined when none are held. */
  function heldDueIn(): number | undefined {
    const c = held[0] && coalescing.get(held[0].subject);
    return c ? Math.max(0, heldSince + c.lingerMs - performance.now()) : undefined;
  }

  /** Deletes what was published and not yet deleted. */
  async function settle(): Promise<void> {
    if (published.length === 0 || !leader) return;
    await leader.client.query(`DELETE FROM "${schema}".outbox WHERE id = ANY($1::bigint[])`, [sqlArray(published)]);
    vacuum.deleted(published.length);
    published = [];
  }

  /**
   * Relays until a pass comes back short of a full batch. Rows committed after a pass's read
   * announce themselves with a NOTIFY that sets `dirty` (or are handed over), so stopping there
   * loses nothing; the last pass's rows are deleted by the next pass (the next NOTIFY or poll).
   * Handed rows alone, when they may skip the read (relayHanded), are relayed without a pass.
   */
  async function drain(flushAll = false, notified = true): Promise<void> {
    if (!flushAll && leader && !leader.broken && handed.length > 0 && (await relayHanded(leader, notified))) {
      if (held.length && heldDueIn() === 0) await publishRows(leader, [], true);
      return;
    }
    handed = [];
    while (!stopped && leader && !leader.broken && (await relayBatch(leader)) === RELAY_BATCH) {
      /* keep going while batches come back full */
    }
    // Held rows that are due (or all of them, when flushing) go with a pass of their own.
    if (held.length && !stopped && leader && !leader.broken && (flushAll || heldDueIn() === 0)) await relayBatch(leader, true);
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (leader?.broken) resign();
        if (!leader) await tryLead();
        if (leader) {
          const notified = dirty;
          dirty = false;
          running = drain(false, notified);
          await running;
        }
      } catch (err) {
        log.warn({ err }, 'outbox relay pass failed; retrying');
        resign();
      }
      if (stopped) break;
      if ((dirty || handed.length > 0) && leader) continue;
      await new Promise<void>((resolve) => {
        const poll = leader ? (opts.pollMs ?? 1000) : 2000;
        const t = setTimeout(resolve, Math.min(poll, heldDueIn() ?? poll));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  const loopDone = loop();
  const leading = () => leader !== undefined && !leader.broken;
  return {
    get isLeader() {
      return leading();
    },
    get leading() {
      return leading();
    },
    written(rows) {
      if (leading()) {
        if (rows?.length) handed.push(...rows);
        else dirty = true;
        wake?.();
        return;
      }
      // Leadership moved since the write asked: the NOTIFY it left out goes to whoever leads now.
      pool.query('SELECT pg_notify($1, $2)', [`${schema}_outbox`, '']).catch((err: unknown) => log.warn({ err }, 'outbox notify failed; the relay will poll'));
    },
    async flush() {
      await running.catch(() => undefined);
      if (!leader) await tryLead().catch(() => undefined);
      await drain(true);
      await settle();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loopDone;
      await running.catch(() => undefined);
      await settle().catch(() => undefined);
      resign();
      await vacuum.idle();
    },
  };
}

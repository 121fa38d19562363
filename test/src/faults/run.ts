/**
 * `npm run test:faults [-- --short] [-- --only <name,...>]`: the fault-injection suite
 * (operations.md §4.7, issue 12). Runs the services as separate processes against a
 * PostgreSQL cluster, Redis and NATS of its own, keeps senders (Idempotency-Key, retried
 * until acknowledged) and long-polling clients busy, injects one fault at a time, and checks
 * after each: every acknowledged send stored exactly once, every live queue got every
 * acknowledged message exactly once and in order (or was told BAD_EVENT_QUEUE_ID), no 5xx
 * other than 503, and the time until a new send reached every queue again.
 * Prints the table; exits non-zero if an invariant broke.
 */
import { parseArgs } from 'node:util';
import { bootSystem, HEARTBEAT_MS, type FaultSystem } from './system.js';
import type { Replica, Service } from './cluster.js';
import type { QueueLog, SendRecord } from './load.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Fault {
  name: string;
  /** Healing is timed from the injection (the system must carry on without the process) or from the dependency's return. */
  healFrom: 'start' | 'end';
  /** Injects the fault, calling `began` at the moment it starts; resolves when it ended (dependency back). */
  inject(sys: FaultSystem, began: () => void): Promise<{ start: number; end: number }>;
}

const PAUSE_MS = 15_000;

async function killFault(sys: FaultSystem, pick: () => Promise<Replica>, began: () => void): Promise<{ start: number; end: number }> {
  const r = await pick();
  const start = Date.now();
  began();
  await sys.cluster.kill(r);
  await sys.cluster.waitReady(r, 90_000);
  return { start, end: Date.now() };
}

async function pauseFault(sys: FaultSystem, pick: () => Promise<Replica>, ms: number, began: () => void): Promise<{ start: number; end: number }> {
  const r = await pick();
  const start = Date.now();
  began();
  sys.cluster.pause(r);
  await sleep(ms);
  sys.cluster.resume(r);
  return { start, end: Date.now() };
}

const leader = (s: Service) => (sys: FaultSystem) => () => sys.cluster.leader(s);
const nonLeader = (s: Service) => (sys: FaultSystem) => () => sys.cluster.nonLeader(s);

function faults(pauseMs: number): Fault[] {
  const kill = (name: string, pick: (sys: FaultSystem) => () => Promise<Replica>): Fault => ({ name, healFrom: 'start', inject: (sys, began) => killFault(sys, pick(sys), began) });
  const pause = (name: string, pick: (sys: FaultSystem) => () => Promise<Replica>): Fault => ({ name, healFrom: 'start', inject: (sys, began) => pauseFault(sys, pick(sys), pauseMs, began) });
  return [
    kill('SIGKILL events leader', leader('events')),
    kill('SIGKILL events non-leader', nonLeader('events')),
    pause(`SIGSTOP events leader ${pauseMs / 1000}s`, leader('events')),
    kill('SIGKILL messages relay leader', leader('messages')),
    kill('SIGKILL messages non-leader', nonLeader('messages')),
    pause(`SIGSTOP messages relay leader ${pauseMs / 1000}s`, leader('messages')),
    kill('SIGKILL subscriptions relay leader', leader('subscriptions')),
    kill('SIGKILL users relay leader', leader('users')),
    kill('SIGKILL gateway', (sys) => async () => sys.cluster.of('gateway')[0] as Replica),
    {
      name: 'NATS restart',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        await sys.infra.nats.stop();
        await sys.infra.nats.start();
        return { start, end: Date.now() };
      },
    },
    {
      name: 'NATS outage 20s',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        await sys.infra.nats.stop();
        await sleep(20_000);
        await sys.infra.nats.start();
        return { start, end: Date.now() };
      },
    },
    {
      name: 'Redis loss (killed, back empty)',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        await sys.infra.redis.stop('SIGKILL');
        await sleep(2_000);
        await sys.infra.redis.start();
        return { start, end: Date.now() };
      },
    },
    {
      name: 'PostgreSQL fast restart',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        await sys.infra.pg.restart('fast');
        return { start, end: Date.now() };
      },
    },
    {
      name: 'PostgreSQL immediate restart x3',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        for (let i = 0; i < 3; i++) {
          await sys.infra.pg.restart('immediate');
          await sleep(3_000);
        }
        return { start, end: Date.now() - 3_000 };
      },
    },
    {
      name: 'graceful stop/start of everything',
      healFrom: 'end',
      async inject(sys, began) {
        const start = Date.now();
        began();
        await sys.cluster.restartAll();
        return { start, end: Date.now() };
      },
    },
  ];
}

const SHORT = ['SIGKILL events leader', 'SIGSTOP messages relay leader', 'PostgreSQL fast restart', 'NATS restart'];

export interface Row {
  fault: string;
  acked: number;
  lost: number;
  duplicated: number;
  outOfOrder: number;
  invalidated: number;
  fivexx: number;
  unavailable: number;
  healMs: number | undefined;
  notes: string[];
}

/**
 * Sends probes until one reaches every live queue registered before it; returns when it did,
 * with a line saying where the time went (probe acknowledged, then each queue's arrival).
 */
async function waitHealed(sys: FaultSystem, phase: string, from: () => number, deadline: number): Promise<{ at?: number; trace: string[] }> {
  const trace: string[] = [];
  const rel = (t: number) => `+${((t - from()) / 1000).toFixed(1)}s`;
  for (let n = 0; Date.now() < deadline; n++) {
    const probe = await sys.senders.sendOne(`${phase}-probe-${n}`);
    if (probe.id === undefined || probe.ackedAt === undefined) continue;
    // Acknowledged before the dependency was even back (or before the fault took hold): says nothing.
    if (probe.ackedAt < from()) {
      await sleep(100);
      continue;
    }
    const until = Math.min(deadline, Date.now() + 20_000);
    let live: QueueLog[] = [];
    while (Date.now() < until) {
      live = sys.pollers.map((p) => p.current).filter((q): q is QueueLog => q !== undefined && q.registeredAt < probe.firstAttemptAt);
      if (live.length > 0 && live.every((q) => q.received.some((m) => m.id === probe.id))) break;
      if (live.length === 0) break;
      await sleep(50);
    }
    const arrivals = live.map((q) => q.received.find((m) => m.id === probe.id)?.at);
    trace.push(`probe ${n}: sent ${rel(probe.firstAttemptAt)} in ${probe.attempts} attempt(s), acked ${rel(probe.ackedAt)}, reached queues ${arrivals.map((a) => (a === undefined ? 'never' : rel(a))).join(' ')}`);
    if (live.length > 0 && arrivals.every((a) => a !== undefined)) return { at: Math.max(...(arrivals as number[])), trace };
  }
  return { trace };
}

async function check(sys: FaultSystem, fault: string, phase: string, since: number, healMs: number | undefined): Promise<Row> {
  const notes: string[] = [];
  const acked = [...sys.senders.sends.values()].filter((s): s is SendRecord & { id: number } => s.id !== undefined);
  const byId = new Map(acked.map((s) => [s.id, s]));
  notes.push(...sys.senders.refusals.map((r) => `refused ${r}`));
  const unacked = [...sys.senders.sends.values()].filter((s) => s.id === undefined).length;
  if (unacked) notes.push(`${unacked} sends never acknowledged (retried 90 s)`);

  // Queues: wait (bounded) for the acknowledged messages to arrive everywhere.
  const expectedFor = (registeredAt: number) => acked.filter((s) => s.firstAttemptAt > registeredAt);
  const queues = () => sys.pollers.flatMap((p) => p.queues).filter((q) => !q.invalidated || (q.invalidatedAt ?? 0) >= since);
  const settled = () =>
    queues()
      .filter((q) => !q.invalidated)
      .every((q) => {
        const got = new Set(q.received.map((m) => m.id));
        return expectedFor(q.registeredAt).every((s) => got.has(s.id));
      });
  const settleBy = Date.now() + 30_000;
  while (!settled() && Date.now() < settleBy) await sleep(200);

  let lost = 0;
  let duplicated = 0;
  let outOfOrder = 0;
  let invalidated = 0;
  for (const q of queues()) {
    if (q.invalidated) {
      invalidated++;
      continue;
    }
    const mine = q.received.filter((m) => byId.has(m.id) || m.key.startsWith(`${phase}-`));
    const counts = new Map<number, number>();
    for (const m of mine) counts.set(m.id, (counts.get(m.id) ?? 0) + 1);
    const missing = expectedFor(q.registeredAt).filter((s) => !counts.has(s.id));
    if (missing.length) notes.push(`queue ${q.queueId.slice(0, 8)} missed ${missing.length}: ${missing.slice(0, 5).map((s) => `${s.key}#${s.id}`).join(', ')}`);
    lost += missing.length;
    const dups = [...counts.values()].filter((c) => c > 1).length;
    if (dups) notes.push(`queue ${q.queueId.slice(0, 8)} got ${dups} messages twice`);
    duplicated += dups;
    for (let i = 1; i < mine.length; i++) if ((mine[i]?.id ?? 0) < (mine[i - 1]?.id ?? 0)) outOfOrder++;
  }

  // History: every acknowledged send stored once, with the id it was acknowledged with.
  const { rows } = await sys.db.query<{ content: string; ids: number[] }>(
    `SELECT content, array_agg(id ORDER BY id) AS ids FROM messages.message WHERE content LIKE $1 GROUP BY content`,
    [`${phase}-%`],
  );
  const stored = new Map(rows.map((r) => [r.content, r.ids.map(Number)]));
  for (const s of acked) {
    const ids = stored.get(s.key) ?? [];
    if (ids.length === 0) {
      lost++;
      notes.push(`history lost ${s.key}#${s.id}`);
    } else if (ids.length > 1) {
      duplicated++;
      notes.push(`history holds ${s.key} ${ids.length} times (${ids.join(', ')})`);
    } else if (ids[0] !== s.id) {
      notes.push(`${s.key} acknowledged as ${s.id} but stored as ${ids[0]}`);
      lost++;
    }
  }
  for (const p of sys.pollers) notes.push(...p.errors.splice(0).map((e) => `poll error ${e}`));
  return { fault, acked: acked.length, lost, duplicated, outOfOrder, invalidated, fivexx: sys.statuses.unexpected5xx, unavailable: sys.statuses.unavailable, healMs, notes };
}

export async function runFault(sys: FaultSystem, f: Fault, phase: string, o: { warmMs: number; afterMs: number }): Promise<Row> {
  const since = Date.now();
  sys.statuses.reset();
  sys.senders.start(phase);
  await sleep(o.warmMs);
  let row: Row;
  try {
    let start = Date.now();
    let end = Number.POSITIVE_INFINITY;
    // Probes start with the fault, so healing is seen as soon as it happens.
    let began = () => undefined as void;
    const healing = new Promise<void>((r) => (began = r)).then(() => waitHealed(sys, phase, () => (f.healFrom === 'start' ? start : end), Date.now() + 150_000));
    ({ start, end } = await f.inject(sys, began));
    const healed = await healing;
    // Healed before the dependency even came back: zero.
    const healMs = healed.at === undefined ? undefined : Math.max(0, healed.at - (f.healFrom === 'start' ? start : end));
    await sleep(o.afterMs);
    await sys.senders.stop();
    row = await check(sys, f.name, phase, since, healMs);
    row.notes.push(...healed.trace.slice(-3));
  } catch (e) {
    await sys.senders.stop();
    row = { fault: f.name, acked: 0, lost: 0, duplicated: 0, outOfOrder: 0, invalidated: 0, fivexx: 0, unavailable: 0, healMs: undefined, notes: [`fault could not run: ${(e as Error).message}`] };
  }
  // Let the system settle before the next fault (elections, restarted processes ready).
  for (const r of sys.cluster.replicas) await sys.cluster.waitReady(r, 90_000).catch(() => undefined);
  return row;
}

export function table(rows: Row[]): string {
  const head = ['fault', 'acked', 'lost', 'duplicated', 'out of order', 'invalidated', '5xx (not 503)', '503', 'time to heal'];
  const body = rows.map((r) => [r.fault, r.acked, r.lost, r.duplicated, r.outOfOrder, r.invalidated, r.fivexx, r.unavailable, r.healMs === undefined ? 'never' : `${(r.healMs / 1000).toFixed(1)} s`].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

export const HEAL_LIMIT_MS = 15_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { short: { type: 'boolean', default: false }, only: { type: 'string' }, keep: { type: 'boolean', default: false } }, strict: true });
  const short = values.short ?? false;
  const pauseMs = short ? 8_000 : PAUSE_MS;
  let chosen = faults(pauseMs);
  if (short) chosen = chosen.filter((f) => SHORT.some((s) => f.name.startsWith(s)));
  if (values.only) {
    const wanted = values.only.split(',').map((s) => s.trim().toLowerCase());
    chosen = chosen.filter((f) => wanted.some((w) => f.name.toLowerCase().includes(w)));
  }
  const started = Date.now();
  process.stdout.write(`[faults] starting PostgreSQL, Redis, NATS and the services (heartbeat ${HEARTBEAT_MS / 1000} s)\n`);
  const sys = await bootSystem({ replicas: { messages: 2, events: 2, gateway: short ? 1 : 2, users: short ? 1 : 2, subscriptions: short ? 1 : 2 }, senders: 4, pollers: 5, sendPauseMs: 50 });
  process.stdout.write(`[faults] up in ${((Date.now() - started) / 1000).toFixed(0)} s; services log: ${sys.logFile}\n`);
  const rows: Row[] = [];
  let failed = false;
  try {
    for (const [i, f] of chosen.entries()) {
      process.stdout.write(`[faults] ${f.name} ...\n`);
      const row = await runFault(sys, f, `p${i}`, { warmMs: short ? 3_000 : 5_000, afterMs: short ? 3_000 : 5_000 });
      rows.push(row);
      const bad = row.lost + row.duplicated + row.outOfOrder + row.fivexx > 0 || row.healMs === undefined || (!short && row.healMs > HEAL_LIMIT_MS);
      if (bad) failed = true;
      process.stdout.write(`[faults]   ${bad ? 'FAILED' : 'ok'}: acked ${row.acked}, lost ${row.lost}, duplicated ${row.duplicated}, out of order ${row.outOfOrder}, invalidated ${row.invalidated}, 5xx ${row.fivexx}, 503 ${row.unavailable}, heal ${row.healMs === undefined ? 'never' : `${row.healMs} ms`}\n`);
      for (const n of row.notes.slice(0, 12)) process.stdout.write(`[faults]     ${n}\n`);
    }
  } finally {
    if (!values.keep) await sys.stop();
  }
  process.stdout.write(`\n${table(rows)}\n\n[faults] ${chosen.length} faults in ${((Date.now() - started) / 1000).toFixed(0)} s: ${failed ? 'FAILED' : 'every invariant held'}\n`);
  process.exit(failed ? 1 : 0);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

/**
 * `npm run test:soak -- --minutes N`: steady mixed load (sends with Idempotency-Key, parked
 * long-polls, register/poll churn) against the services as processes, with the resident
 * memory and the open sockets of every process sampled every 15 s. After a warm-up (the first
 * quarter, at least one minute) memory must stay flat: the last quarter's mean may exceed the
 * second quarter's by at most 15 % (and 25 MiB), and sockets by at most 20 %. Prints the samples
 * and exits non-zero on growth or on a broken delivery invariant.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { bootSystem, type FaultSystem } from './system.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SAMPLE_EVERY_MS = 15_000;

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function openSockets(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      /* closed meanwhile */
    }
  }
  return n;
}

interface Sample {
  at: number;
  rss: Map<string, number>;
  /** V8 heap in use (from /metrics): tells live objects piling up from the heap merely sized up. */
  heap: Map<string, number>;
  sockets: Map<string, number>;
}

const metric = (text: string | undefined, name: string): number | undefined => {
  const m = text === undefined ? null : new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

async function sample(sys: FaultSystem): Promise<Sample> {
  const s: Sample = { at: Date.now(), rss: new Map(), heap: new Map(), sockets: new Map() };
  for (const r of sys.cluster.replicas) {
    const pid = r.proc?.pid;
    if (!pid) continue;
    try {
      s.rss.set(r.label, rssBytes(pid));
      s.sockets.set(r.label, openSockets(pid));
    } catch {
      /* restarted meanwhile */
    }
    const heap = metric(await sys.cluster.metrics(r), 'nodejs_heap_size_used_bytes');
    if (heap !== undefined) s.heap.set(r.label, heap);
  }
  return s;
}

/** Register/poll/delete churn: queues come and go, as clients reconnecting do. */
async function churn(sys: FaultSystem, stop: { done: boolean }): Promise<void> {
  const { http, receiver } = sys;
  while (!stop.done) {
    const r = await http.call(receiver, 'POST', '/register', { event_types: JSON.stringify(['message', 'subscription']) });
    if (r.status === 200) {
      const queue_id = String(r.body.queue_id);
      await http.call(receiver, 'GET', '/events', { queue_id, last_event_id: String(r.body.last_event_id), dont_block: 'true' });
      await http.call(receiver, 'DELETE', '/events', { queue_id });
    }
    await sleep(200);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { minutes: { type: 'string', default: '30' } }, strict: true });
  const minutes = Number(values.minutes);
  if (!(minutes > 0)) throw new Error('--minutes must be a positive number');
  const sys = await bootSystem({ replicas: { messages: 2, events: 2, gateway: 2 }, senders: 2, pollers: 20, sendPauseMs: 100 });
  const samples: Sample[] = [];
  const stop = { done: false };
  let failed = false;
  try {
    sys.senders.start('soak');
    const churning = churn(sys, stop);
    const end = Date.now() + minutes * 60_000;
    while (Date.now() < end) {
      const s = await sample(sys);
      samples.push(s);
      const total = [...s.rss.values()].reduce((a, b) => a + b, 0);
      process.stdout.write(`[soak] ${new Date(s.at).toISOString()} rss total ${(total / 2 ** 20).toFixed(0)} MiB, sockets ${[...s.sockets.values()].reduce((a, b) => a + b, 0)}, acked ${[...sys.senders.sends.values()].filter((x) => x.id !== undefined).length}; ${[...s.rss.keys()].map((l) => `${l} ${((s.rss.get(l) ?? 0) / 2 ** 20).toFixed(0)}/${((s.heap.get(l) ?? 0) / 2 ** 20).toFixed(0)}`).join(' ')} (rss/heap MiB)\n`);
      await sleep(Math.min(SAMPLE_EVERY_MS, Math.max(0, end - Date.now())));
    }
    stop.done = true;
    await churning;
    await sys.senders.stop();

    const q = Math.floor(samples.length / 4);
    const warm = samples.slice(Math.max(q, 4), Math.max(2 * q, 5));
    const last = samples.slice(samples.length - Math.max(q, 1));
    const mean = (xs: Sample[], f: (s: Sample) => number | undefined) => {
      const v = xs.map(f).filter((x): x is number => x !== undefined);
      return v.length ? v.reduce((a, b) => a + b, 0) / v.length : 0;
    };
    process.stdout.write('\n| process | rss after warm-up | rss at the end | heap used after warm-up | heap used at the end | sockets after warm-up | sockets at the end |\n|---|---|---|---|---|---|---|\n');
    for (const r of sys.cluster.replicas) {
      const rw = mean(warm, (s) => s.rss.get(r.label));
      const rl = mean(last, (s) => s.rss.get(r.label));
      const sw = mean(warm, (s) => s.sockets.get(r.label));
      const sl = mean(last, (s) => s.sockets.get(r.label));
      const hw = mean(warm, (s) => s.heap.get(r.label));
      const hl = mean(last, (s) => s.heap.get(r.label));
      const grew = warm.length > 0 && ((rl > rw * 1.15 && rl - rw > 25 * 2 ** 20) || (sl > sw * 1.2 && sl - sw > 5));
      if (grew) failed = true;
      const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
      process.stdout.write(`| ${r.label}${grew ? ' (GREW)' : ''} | ${mib(rw)} | ${mib(rl)} | ${mib(hw)} | ${mib(hl)} | ${sw.toFixed(0)} | ${sl.toFixed(0)} |\n`);
    }
    const acked = [...sys.senders.sends.values()].filter((x) => x.id !== undefined);
    const { rows } = await sys.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages.message WHERE content LIKE 'soak-%'`);
    const stored = rows[0]?.n ?? 0;
    if (stored !== acked.length) failed = true;
    process.stdout.write(`\n[soak] ${minutes} min: ${acked.length} sends acknowledged, ${stored} stored; ${failed ? 'FAILED' : 'flat'}\n`);
  } finally {
    stop.done = true;
    await sys.stop();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

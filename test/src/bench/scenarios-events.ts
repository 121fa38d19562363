/**
 * Event delivery and long-poll scenarios (DESIGN.md budgets):
 *
 * - `events-delivery`: a stream of N subscribers (default 50), each holding a live queue
 *   and long-polling without pause; one of them sends at a fixed rate (default 200 msg/s,
 *   `--opt rate=1000`). Measured: send latency (open model, from `runStep`) and delivery
 *   latency, from the moment the send was accepted (its HTTP response) to the moment another
 *   subscriber's long-poll returned the event. An event that arrives before the send's own
 *   response counts as 0 ms (and is counted in `details.early`). Budget: p50 < 10 ms,
 *   p99 < 50 ms.
 * - `events-idle-polls`: N idle `GET /events` (default 10,000) parked at once; measured: the
 *   resident memory the bench system process gained (it runs the gateway and the events
 *   service with everything else, one replica each). Budget: < 200 MB. Linux only (reads
 *   /proc). Not in the default run (it opens N sockets).
 *
 * Exported functions, for other runners:
 *   deliveryLatency(sys, {subscribers, rate, seconds, runStep}) → {send, delivery, early, lost}
 *   idleParkedPollsMemory(sys, {polls, settleMs}) → {rssBeforeMb, rssAfterMb, addedMb, parked}
 */
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Agent, Pool, request } from 'undici';
import { LatencyHistogram, type LatencySummary } from './histogram.js';
import { basicAuth, type LoadTarget, type StepOptions, type StepResult } from './load.js';
import { defineScenario, type BenchAccount, type BenchSystem, type Scenario } from './scenario.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const form = (p: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();

export async function registerQueue(pool: Pool, who: BenchAccount, params: Record<string, unknown>, host?: string): Promise<{ queueId: string; lastEventId: number }> {
  const r = await pool.request({
    method: 'POST',
    path: '/api/v1/register',
    headers: { authorization: basicAuth(who), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ZulipBench/1.0', ...(host ? { host } : {}) },
    body: form(params),
  });
  const body = (await r.body.json()) as { result: string; queue_id: string; last_event_id: number; msg: string };
  if (body.result !== 'success') throw new Error(`register failed: ${body.msg}`);
  return { queueId: body.queue_id, lastEventId: body.last_event_id };
}

/** Creates `n` accounts (POST /users as the admin), in parallel batches (also used by scenarios-reactions-topics.ts). */
export async function createAccounts(sys: BenchSystem, n: number, tag: string): Promise<BenchAccount[]> {
  const out: BenchAccount[] = [];
  for (let i = 0; i < n; i += 10) {
    const batch = Array.from({ length: Math.min(10, n - i) }, (_, j) =>
      sys.createUser({ email: `${tag}${i + j}-${Date.now()}@zulip.test`, full_name: `Bench ${tag} ${i + j}` }),
    );
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

export interface DeliveryOptions {
  subscribers: number;
  rate: number;
  seconds: number;
  /** The runner's fixed-rate step (open model) used for the sends. */
  runStep(target: LoadTarget, o: StepOptions): Promise<StepResult>;
  log?(line: string): void;
}

export interface DeliveryResult {
  send: StepResult;
  delivery: LatencySummary;
  /** Deliveries that came back before the send's own response. */
  early: number;
  /** Deliveries expected but not seen within 10 s of the last send. */
  lost: number;
}

/** Delivery latency to N live long-polls of one stream's subscribers at a fixed send rate. */
export async function deliveryLatency(sys: BenchSystem, o: DeliveryOptions): Promise<DeliveryResult> {
  const stream = `bench-delivery-${Date.now()}`;
  const members = await createAccounts(sys, o.subscribers, 'delivery');
  const sender = members[0] as BenchAccount;
  const admin = sys.client(sys.admin);
  const sub = await admin.post('/users/me/subscriptions', { subscriptions: [{ name: stream }], principals: members.map((m) => m.user_id) });
  if (sub.body.result !== 'success') throw new Error(`subscribe failed: ${sub.body.msg}`);

  // One pool per gateway with one connection per parked poll (plus setup traffic).
  const pools = sys.gatewayUrls.map((u) => new Pool(u, { connections: o.subscribers + 8, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 }));
  const receivers = members.slice(1);
  const queues = await Promise.all(receivers.map((m, i) => registerQueue(pools[i % pools.length] as Pool, m, { event_types: ['message'], fetch_event_types: [] })));

  const acceptedAt = new Map<number, number>();
  const arrivals = new Map<number, number[]>();
  const hist = new LatencyHistogram();
  let early = 0;
  let seen = 0;
  const record = (messageId: number, arrived: number) => {
    const accepted = acceptedAt.get(messageId);
    if (accepted === undefined) {
      const list = arrivals.get(messageId) ?? [];
      list.push(arrived);
      arrivals.set(messageId, list);
      return;
    }
    if (arrived < accepted) early++;
    hist.record(Math.max(0, arrived - accepted));
    seen++;
  };

  let polling = true;
  const loops = receivers.map(async (m, i) => {
    const q = queues[i] as { queueId: string; lastEventId: number };
    const pool = pools[i % pools.length] as Pool;
    const headers = { authorization: basicAuth(m), 'user-agent': 'ZulipBench/1.0' };
    while (polling) {
      const r = await pool.request({ method: 'GET', path: `/api/v1/events?queue_id=${q.queueId}&last_event_id=${q.lastEventId}`, headers });
      const body = (await r.body.json()) as { events?: Array<{ id: number; type: string; message?: { id: number } }> };
      const now = performance.now();
      for (const e of body.events ?? []) {
        q.lastEventId = Math.max(q.lastEventId, e.id);
        if (e.type === 'message' && e.message) record(e.message.id, now);
      }
    }
  });
  await sleep(500);

  const headers = { authorization: basicAuth(sender), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ZulipBench/1.0' };
  const send = await o.runStep(
    {
      name: `POST /messages (stream of ${o.subscribers})`,
      request: (i) => ({ method: 'POST', path: '/api/v1/messages', headers, body: form({ type: 'stream', to: stream, topic: 'delivery', content: `m${i}` }) }),
      check: (_status, body) => {
        const id = (JSON.parse(body) as { id?: number }).id;
        if (id === undefined) return 'no id';
        const now = performance.now();
        acceptedAt.set(id, now);
        for (const arrived of arrivals.get(id) ?? []) record(id, arrived);
        arrivals.delete(id);
        return undefined;
      },
    },
    { rate: o.rate, durationSeconds: o.seconds },
  );
  const expected = acceptedAt.size * receivers.length;
  const deadline = Date.now() + 10_000;
  while (seen < expected && Date.now() < deadline) await sleep(100);
  polling = false;
  // The parked polls end at their heartbeat; do not wait for them.
  void Promise.allSettled(loops).then(() => Promise.all(pools.map((p) => p.close())));
  setTimeout(() => void Promise.all(pools.map((p) => p.destroy())), 1000).unref();
  o.log?.(`delivery: ${seen}/${expected} events seen`);
  return { send, delivery: hist.summary(), early, lost: expected - seen };
}

/**
 * RSS in MB of the bench system: the runner's `system-child` process plus its children (the
 * service processes, in the processes layout).
 */
function systemRssMb(): number | undefined {
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return [{ pid: Number(pid), ppid, rssMb: rss ? Number(rss[1]) / 1024 : 0, cmd }];
      } catch {
        return []; // the process went away while we looked
      }
    });
  const root = procs.find((p) => p.ppid === process.pid && p.cmd.includes('system-child'));
  if (!root) return undefined;
  return procs.filter((p) => p.pid === root.pid || p.ppid === root.pid).reduce((sum, p) => sum + p.rssMb, 0);
}

export interface IdlePollsResult {
  rssBeforeMb: number;
  rssAfterMb: number;
  addedMb: number;
  parked: number;
  /** Polls that answered before the measurement (they should all be parked). */
  answeredEarly: number;
}

/**
 * Memory added by `polls` idle parked GET /events on one gateway and one events replica.
 * Queues are spread over accounts (each may hold at most ZC_MAX_QUEUES_PER_USER, default 100).
 */
export async function idleParkedPollsMemory(sys: BenchSystem, o: { polls: number; settleMs: number; log?(line: string): void }): Promise<IdlePollsResult> {
  const perUser = 90;
  const accounts = await createAccounts(sys, Math.ceil(o.polls / perUser), 'idle');
  const setup = new Pool(sys.baseUrl, { connections: 32 });
  const queues: Array<{ who: BenchAccount; queueId: string; lastEventId: number }> = [];
  for (let i = 0; i < o.polls; i += 200) {
    const batch = Array.from({ length: Math.min(200, o.polls - i) }, async (_, j) => {
      const who = accounts[Math.floor((i + j) / perUser)] as BenchAccount;
      return { who, ...(await registerQueue(setup, who, { event_types: ['message'], fetch_event_types: [] })) };
    });
    queues.push(...(await Promise.all(batch)));
  }
  await setup.close();
  o.log?.(`idle polls: ${queues.length} queues registered`);
  await sleep(o.settleMs);
  const before = systemRssMb();
  if (before === undefined) throw new Error('cannot find the bench system process (needs Linux /proc and the in-process runner)');

  const agent = new Agent({ connections: o.polls + 16, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000, keepAliveTimeout: 120_000 });
  let answeredEarly = 0;
  let parkedAt = 0;
  const polls = queues.map(async (q) => {
    try {
      const r = await request(`${sys.baseUrl}/api/v1/events?queue_id=${q.queueId}&last_event_id=${q.lastEventId}`, {
        dispatcher: agent,
        headers: { authorization: basicAuth(q.who), 'user-agent': 'ZulipBench/1.0' },
      });
      await r.body.text();
      if (parkedAt === 0) answeredEarly++;
    } catch {
      /* the agent is destroyed at the end */
    }
  });
  await sleep(o.settleMs + Math.ceil(o.polls / 1000) * 1000);
  parkedAt = Date.now();
  const after = systemRssMb() ?? before;
  o.log?.(`idle polls: rss ${before.toFixed(0)} MB → ${after.toFixed(0)} MB`);
  await agent.destroy();
  await Promise.allSettled(polls);
  return { rssBeforeMb: before, rssAfterMb: after, addedMb: after - before, parked: queues.length - answeredEarly, answeredEarly };
}

const delivery = defineScenario({
  name: 'events-delivery',
  description: 'delivery latency: send accepted → event returned by another subscriber\'s long-poll (50 live queues, fixed rate)',
  default: true,
  async run(ctx) {
    const subscribers = Number(ctx.options.extra.subscribers ?? 50);
    const rate = Number(ctx.options.extra.rate ?? 200);
    const seconds = Number(ctx.options.extra.seconds ?? Math.max(5, ctx.options.stepSeconds));
    const r = await deliveryLatency(ctx.sys, { subscribers, rate, seconds, runStep: ctx.runStep, log: ctx.log });
    return {
      headlines: [
        { label: `delivery p50 at ${rate} msg/s to ${subscribers}`, value: r.delivery.p50, unit: 'ms', budget: { op: '<', value: 10 } },
        { label: `delivery p99 at ${rate} msg/s to ${subscribers}`, value: r.delivery.p99, unit: 'ms', budget: { op: '<', value: 50 } },
        { label: `send p50 at ${rate} msg/s`, value: r.send.latency.p50, unit: 'ms', budget: { op: '<', value: 10 } },
        { label: `send p99 at ${rate} msg/s`, value: r.send.latency.p99, unit: 'ms', budget: { op: '<', value: 50 } },
        { label: 'deliveries lost', value: r.lost, unit: '', budget: { op: '<=', value: 0 } },
      ],
      steps: [r.send],
      details: { delivery: r.delivery, early: r.early, lost: r.lost },
    };
  },
});

const idlePolls = defineScenario({
  name: 'events-idle-polls',
  description: 'memory added by 10,000 idle parked GET /events (one gateway, one events replica)',
  default: false,
  needsInProcess: true,
  async run(ctx) {
    const polls = Number(ctx.options.extra.polls ?? 10_000);
    const r = await idleParkedPollsMemory(ctx.sys, { polls, settleMs: 3000, log: ctx.log });
    return {
      headlines: [
        { label: `memory added by ${polls} parked polls`, value: Math.round(r.addedMb), unit: 'MB', budget: { op: '<', value: 200 } },
        { label: 'polls that did not stay parked', value: r.answeredEarly, unit: '', budget: { op: '<=', value: 0 } },
      ],
      details: { ...r },
    };
  },
});

export const scenarios: Scenario[] = [delivery, idlePolls];

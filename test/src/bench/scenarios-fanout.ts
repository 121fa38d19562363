/**
 * Fan-out scenarios shaped like the ejabberd peer benchmark (../shared/bench/ejabberd), so the
 * two compare in one run: K members of one stream, each long-polling a live event queue; one
 * member sends N messages, paced or as a burst; each other member's receipt is timed from the
 * start of the send (the HTTP request going out), as the peer times it.
 *
 * - `fanout-paced`: `--opt rate=100` (default) messages/s for `--opt seconds=10` to a stream of
 *   `--opt members=50`. Delivery p50/p99 (budget: under 10 / 50 ms).
 * - `fanout-burst`: `--opt messages=2000` sent at once (at most `--opt connections=128` in
 *   flight, see DEFAULT_BURST_CONNECTIONS); messages/s and deliveries/s until the last
 *   delivery (budget: at least the peer's, same run). `--opt queues=N` lets only N members
 *   long-poll (default: all but the sender): with 1, the figure is what the send path alone
 *   (check, write, relay, append) sustains.
 * - Both are preceded by untimed sends of the burst's shape until the services' CPU per
 *   delivery settles (see WARM_UP_ROUND), or `--opt warmup=N` sends.
 * - `fanout-10k`: a stream of `--opt members=10000` of whom `--opt queues=1000` long-poll;
 *   `--opt messages=30` sends one after another. Send acknowledgement latency (budget 100 ms)
 *   and time until every live queue has the message (budget 1 s). The accounts are seeded
 *   through SQL in a realm of their own (seed-users.ts): through the API it took too long.
 *   Thirty sends, not five: with five the p50 was the third-fastest send, and it moved from
 *   73 to 113 ms between runs of the same build, across the budget; thirty take ~45 s.
 *
 * `fanout-paced` then measures the shape's floor on this machine (floor.ts, longPollFloor): a
 * bare Node HTTP server answering as many long-polls, all at once every 1000/rate ms, with one
 * of the run's own answers; its CPU per answer, and the gateway's CPU per delivery against it,
 * are reported (`--opt floor=off` skips it). Where waking a process is dear (a paravirtualised
 * guest: 2026-11-28's machine spent 90 µs of CPU on an empty 10 ms timer tick), much of a
 * delivery's cost is the machine's, and this says how much.
 *
 * With ZC_DELIVERY_TRACE=1 in the environment (the bench system's services inherit it), the
 * paced and burst scenarios also print where each delivery's time went, hop by hop (see
 * hopSummaries), and keep it in the JSON (`details.hops`).
 *
 * Every scenario reports the system's CPU per delivered event (`cpu ms/delivery`: CPU time of
 * every service process over the run, divided by deliveries) and its split by service. When
 * the peer's run.sh is present (`ZC_BENCH_EJABBERD`, default ../shared/bench/ejabberd/run.sh
 * beside the repository) it runs right after ours with the same shape and the ratios are
 * reported; `--opt ejabberd=off` or a missing script skips them (said in the report).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { createPool } from '@zc/shared/db';
import { longPollFloor } from './floor.js';
import { LatencyHistogram, type LatencySummary } from './histogram.js';
import { INFRASTRUCTURE, groupCpuMeter, processesMatching } from './machine-cpu.js';
import { basicAuth } from './load.js';
import { PollClient } from './poll-client.js';
import { createAccounts, registerQueue } from './scenarios-events.js';
import { seedPeople, type SeededPeople } from './seed-users.js';
import { defineScenario, type BenchAccount, type BenchContext, type BenchSystem, type Headline, type Scenario, type ScenarioResult } from './scenario.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const form = (p: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(p).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();
const round = (n: number, digits = 2) => Number(n.toFixed(digits));

/** A stream whose members hold live queues and long-poll them without pause. */
interface LiveStream {
  stream: string;
  sender: BenchAccount;
  /** Live queues (one per member other than the sender, up to the number asked for). */
  queues: number;
  /** Sends message number `i` (content `fo<i>`, or `wu<i>` for a warm-up send); resolves with the HTTP status and body. */
  send(i: number, o?: { warmUp?: boolean }): Promise<{ status: number; body: string }>;
  /** Deliveries seen so far (warm-up sends not counted), and each message's arrival times (ms, performance.now()). */
  delivered(): number;
  /** The body of a poll answer that carried one timed message, as the gateway sent it (for the long-poll floor). */
  sampleAnswer(): string | undefined;
  /** Deliveries of warm-up sends seen so far. */
  warmUpDelivered(): number;
  arrivals: Map<number, number[]>;
  /** Hop times of the deliveries, when the system traces them (ZC_DELIVERY_TRACE). */
  traces: DeliveryTrace[];
  close(): Promise<void>;
}

/** When one delivery passed each hop (wall-clock ms; performance.timeOrigin-based in every process). */
interface DeliveryTrace {
  message: number;
  /** When this client had the poll's answer. */
  arrived: number;
  /** The event's `zc_trace` (the events service's appender; relay_read 0 when the relay did not say). */
  event: { relay_read: number; stored: number; received: number; routed: number };
  /** The gateway's `x-zc-trace` (wake sent, heard, answer ready, header set); absent when the poll found the event waiting. */
  gateway?: number[];
}

const wallClock = (perfMs: number) => performance.timeOrigin + perfMs;

const CONTENT_PREFIX = 'fo';
const WARM_UP_PREFIX = 'wu';

/** Where the stream lives: the bench realm (its admin subscribes people) or a seeded realm reached by its host name. */
interface StreamRealm {
  /** Who subscribes the members (an administrator of their realm). */
  admin: BenchAccount;
  /** The realm's host name when it is not the bench realm's. */
  host?: string;
}

/**
 * Subscribes `members` to `stream` in batches of up to 500 as `realm.admin`. Accounts seeded
 * through SQL reach the subscriptions service's read model through the bus a little later: a
 * batch refused for an unknown user is asked again, as is one the gateway gave up on (503 at
 * its deadline on a loaded machine; subscribing again is harmless, and the batch shrinks), for
 * up to three minutes without progress.
 */
async function subscribeAll(sys: BenchSystem, realm: StreamRealm, stream: string, members: readonly BenchAccount[]): Promise<void> {
  const pool = new Pool(sys.baseUrl, { connections: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const headers = { authorization: basicAuth(realm.admin), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ZulipBench/1.0', ...(realm.host ? { host: realm.host } : {}) };
  try {
    let size = 500;
    let giveUpAt = Date.now() + 180_000;
    for (let i = 0; i < members.length; ) {
      const principals = members.slice(i, i + size).map((m) => m.user_id);
      const r = await pool.request({ method: 'POST', path: '/api/v1/users/me/subscriptions', headers, body: form({ subscriptions: [{ name: stream }], principals }) });
      const body = (await r.body.json()) as { result: string; msg: string };
      if (body.result === 'success') {
        i += principals.length;
        giveUpAt = Date.now() + 180_000;
        continue;
      }
      if (Date.now() > giveUpAt) throw new Error(`subscribe failed: ${body.msg}`);
      // A batch the gateway gave up on at its deadline is asked again in halves: on a machine
      // loaded by other work (load 8-13) batches of 500 into a stream of thousands were refused
      // for three minutes on end, each attempt cancelled and rolled back at the deadline.
      if (r.statusCode === 503) size = Math.max(50, Math.floor(size / 2));
      await sleep(500);
    }
  } finally {
    await pool.close();
  }
}

/** Subscribes `members` to a fresh stream (in batches) and starts `queues` poll loops. */
async function openLiveStream(
  sys: BenchSystem,
  o: { members: BenchAccount[]; queues: number; senderConnections: number; realm?: StreamRealm; log(l: string): void },
): Promise<LiveStream> {
  const stream = `bench-fanout-${Date.now()}`;
  const sender = o.members[0] as BenchAccount;
  const realm = o.realm ?? { admin: sys.admin };
  const hostHeader: Record<string, string> = realm.host ? { host: realm.host } : {};
  await subscribeAll(sys, realm, stream, o.members);
  const receivers = o.members.slice(1, 1 + o.queues);
  // Registration only (100 at a time); the polls go through PollClient below.
  const pools = sys.gatewayUrls.map((u) => new Pool(u, { connections: 100, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 }));
  const queues: Array<{ queueId: string; lastEventId: number }> = [];
  try {
    for (let i = 0; i < receivers.length; i += 100) {
      const batch = receivers.slice(i, i + 100).map((m, j) => registerQueue(pools[(i + j) % pools.length] as Pool, m, { event_types: ['message'], fetch_event_types: [], apply_markdown: false }, realm.host));
      queues.push(...(await Promise.all(batch)));
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
  o.log(`${o.members.length} members, ${queues.length} live queues`);

  const arrivals = new Map<number, number[]>();
  const traces: DeliveryTrace[] = [];
  let delivered = 0;
  let warmUpDelivered = 0;
  let sampleAnswer: string | undefined;
  let polling = true;
  const clients: PollClient[] = [];
  const loops = receivers.map(async (m, i) => {
    const q = queues[i] as { queueId: string; lastEventId: number };
    const client = new PollClient(new URL(sys.gatewayUrls[i % sys.gatewayUrls.length] as string), { authorization: basicAuth(m), 'user-agent': 'ZulipBench/1.0', ...hostHeader }, 'x-zc-trace');
    clients.push(client);
    while (polling) {
      try {
        const r = await client.get(`/api/v1/events?queue_id=${q.queueId}&last_event_id=${q.lastEventId}`);
        if (r.status !== 200) throw new Error(`GET /events answered ${r.status}: ${r.body.slice(0, 200)}`);
        const body = JSON.parse(r.body) as { events?: Array<{ id: number; type: string; message?: { content: string }; zc_trace?: DeliveryTrace['event'] }> };
        const now = performance.now();
        const gatewayTrace = r.header;
        if (body.events?.length === 1 && body.events[0]?.message?.content.startsWith(CONTENT_PREFIX)) sampleAnswer = r.body;
        for (const e of body.events ?? []) {
          q.lastEventId = Math.max(q.lastEventId, e.id);
          const content = e.message?.content ?? '';
          if (e.type === 'message' && content.startsWith(WARM_UP_PREFIX)) warmUpDelivered++;
          if (e.type !== 'message' || !content.startsWith(CONTENT_PREFIX)) continue;
          const n = Number(content.slice(CONTENT_PREFIX.length));
          const list = arrivals.get(n) ?? [];
          list.push(now);
          arrivals.set(n, list);
          if (e.zc_trace) {
            traces.push({ message: n, arrived: wallClock(now), event: e.zc_trace, ...(typeof gatewayTrace === 'string' ? { gateway: gatewayTrace.split(',').map(Number) } : {}) });
          }
          delivered++;
        }
      } catch (err) {
        if (polling) o.log(`poll failed: ${(err as Error).message}`);
        await sleep(100);
      }
    }
  });
  await sleep(500);

  const senderPool = new Pool(sys.baseUrl, { connections: o.senderConnections, pipelining: 1 });
  const headers = { authorization: basicAuth(sender), 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ZulipBench/1.0', ...hostHeader };
  return {
    stream,
    sender,
    queues: queues.length,
    async send(i, so) {
      const content = `${so?.warmUp ? WARM_UP_PREFIX : CONTENT_PREFIX}${i}`;
      const r = await senderPool.request({ method: 'POST', path: '/api/v1/messages', headers, body: form({ type: 'stream', to: stream, topic: 'fanout', content }) });
      return { status: r.statusCode, body: await r.body.text() };
    },
    delivered: () => delivered,
    sampleAnswer: () => sampleAnswer,
    warmUpDelivered: () => warmUpDelivered,
    arrivals,
    traces,
    async close() {
      polling = false;
      // Parked polls end at their heartbeat; their connections are closed rather than waited for.
      await senderPool.close();
      setTimeout(() => {
        for (const c of clients) c.close();
      }, 1000).unref();
      void Promise.allSettled(loops);
    },
  };
}

interface CpuUsed {
  /** CPU seconds of every service process over the run. */
  seconds?: number;
  /** The same less what the system burns idle (timers, pings) over as long: the work the load caused. */
  netSeconds?: number;
  byService: Record<string, number>;
}

/**
 * CPU the system used between two readings: total, net of its idle rate (measured over
 * `idleMs` first, with every poll parked), and per service (seconds). On a loaded machine a
 * run stretches, and the idle share of its CPU with it; the net figure does not.
 */
async function cpuMeter(ctx: BenchContext, idleMs = 2000): Promise<() => CpuUsed> {
  const i0 = ctx.cpuSeconds?.();
  const w0 = performance.now();
  await sleep(idleMs);
  const i1 = ctx.cpuSeconds?.();
  const idleRate = i0 !== undefined && i1 !== undefined ? (i1 - i0) / ((performance.now() - w0) / 1000) : undefined;
  const total0 = ctx.cpuSeconds?.();
  const by0 = ctx.cpuSecondsByService?.() ?? {};
  const t0 = performance.now();
  return () => {
    const total1 = ctx.cpuSeconds?.();
    const by1 = ctx.cpuSecondsByService?.() ?? {};
    const byService = Object.fromEntries(Object.entries(by1).map(([k, v]) => [k, round(v - (by0[k] ?? 0))]));
    const seconds = total0 !== undefined && total1 !== undefined ? total1 - total0 : undefined;
    const netSeconds = seconds !== undefined && idleRate !== undefined ? Math.max(0, seconds - (idleRate * (performance.now() - t0)) / 1000) : undefined;
    return { ...(seconds !== undefined ? { seconds } : {}), ...(netSeconds !== undefined ? { netSeconds } : {}), byService };
  };
}

function cpuHeadlines(cpu: CpuUsed, deliveries: number): { headlines: Headline[]; perDeliveryMs?: number; netPerDeliveryMs?: number; byServiceUs: Record<string, number> } {
  if (cpu.seconds === undefined || deliveries === 0) return { headlines: [], byServiceUs: {} };
  const perDeliveryMs = (cpu.seconds * 1000) / deliveries;
  const netPerDeliveryMs = cpu.netSeconds !== undefined ? (cpu.netSeconds * 1000) / deliveries : undefined;
  const byServiceUs = Object.fromEntries(Object.entries(cpu.byService).map(([k, v]) => [k, Math.round((v * 1e6) / deliveries)]));
  const split = Object.entries(byServiceUs)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return {
    perDeliveryMs,
    ...(netPerDeliveryMs !== undefined ? { netPerDeliveryMs } : {}),
    byServiceUs,
    headlines: [
      { label: 'system CPU per delivered event', value: round(perDeliveryMs, 3), unit: 'ms' },
      ...(netPerDeliveryMs !== undefined ? [{ label: 'system CPU per delivered event, less the idle rate', value: round(netPerDeliveryMs, 3), unit: 'ms' }] : []),
      ...(split ? [{ label: `  by service (µs/delivery): ${split}`, value: round(cpu.seconds, 1), unit: 'cpu s total' }] : []),
    ],
  };
}

/** CPU used beside the services over a run: the servers they use (machine-cpu.ts), and this process, the load generator. */
interface BesidesUsed {
  infrastructure: Record<string, number>;
  loadGenerator: number;
}

function besidesMeter(): () => BesidesUsed {
  const infrastructure = groupCpuMeter(INFRASTRUCTURE);
  const own = process.cpuUsage();
  return () => {
    const d = process.cpuUsage(own);
    return { infrastructure: infrastructure(), loadGenerator: (d.user + d.system) / 1e6 };
  };
}

/**
 * The servers' CPU per delivery beside the services', and the services' with it: ejabberd keeps
 * its rooms in its own process, while our deliveries also cost PostgreSQL, NATS and Redis. The
 * load generator's (its long-poll clients and the sender, on the same two cores) is shown, not
 * added to anything.
 */
function besidesHeadlines(
  used: BesidesUsed,
  deliveries: number,
  servicesMs: number | undefined,
): { headlines: Headline[]; infrastructureUs: Record<string, number>; withInfrastructureMs?: number; loadGeneratorMs: number } {
  const infrastructureUs = Object.fromEntries(Object.entries(used.infrastructure).map(([k, v]) => [k, deliveries > 0 ? Math.round((v * 1e6) / deliveries) : 0]));
  const infraSeconds = Object.values(used.infrastructure).reduce((a, v) => a + v, 0);
  const loadGeneratorMs = deliveries > 0 ? round((used.loadGenerator * 1000) / deliveries, 4) : 0;
  const withInfrastructureMs = servicesMs !== undefined && deliveries > 0 ? servicesMs + (infraSeconds * 1000) / deliveries : undefined;
  const split = Object.entries(infrastructureUs)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return {
    infrastructureUs,
    loadGeneratorMs,
    ...(withInfrastructureMs !== undefined ? { withInfrastructureMs } : {}),
    headlines: [
      { label: `  beside them (µs/delivery; the machine's servers, whatever else they serve): ${split}; load generator ${Math.round(loadGeneratorMs * 1000)}`, value: round(infraSeconds, 1), unit: 'cpu s total' },
      ...(withInfrastructureMs !== undefined ? [{ label: 'system CPU per delivered event with PostgreSQL, NATS and Redis', value: round(withInfrastructureMs, 3), unit: 'ms' }] : []),
    ],
  };
}

// --- the peer ---------------------------------------------------------------------------------

export interface PeerResult {
  msgs_per_s: number;
  deliveries_per_s: number;
  p50_ms: number;
  p99_ms: number;
  delivered: number;
  expected: number;
  /** CPU of the peer's server (its beam.smp) per delivery, sampled from /proc while the load generator ran. */
  cpu_ms_per_delivery?: number;
}

const DEFAULT_PEER = fileURLToPath(new URL('../../../../shared/bench/ejabberd/run.sh', import.meta.url));

/**
 * CPU of the peer's server (the beam.smp started with `-s ejabberd`) while its load generator
 * (muc.mjs) runs: not its start, nor the `ejabberdctl` calls registering users (each its own
 * short-lived beam.smp), which would otherwise be charged to the deliveries.
 */
class PeerCpu {
  private atStart?: number;
  private atEnd?: number;
  private readonly timer = setInterval(() => this.sample(), 100);

  private sample(): void {
    const server = processesMatching(/beam\.smp .*-s ejabberd( |$)/)[0];
    if (!server) return;
    const running = processesMatching(/node muc\.mjs/).length > 0;
    if (running) {
      this.atStart ??= server.cpu;
      this.atEnd = server.cpu;
    }
  }

  /** CPU seconds of the server over the generator's run (undefined when it was never seen). */
  stop(): number | undefined {
    clearInterval(this.timer);
    return this.atStart !== undefined && this.atEnd !== undefined ? this.atEnd - this.atStart : undefined;
  }
}

/**
 * Runs the peer with `args` (K mode N [rate]); undefined with a reason when it is absent,
 * switched off or fails.
 */
async function runPeer(ctx: BenchContext, args: Array<string | number>): Promise<{ peer?: PeerResult; skipped?: string }> {
  const script = process.env.ZC_BENCH_EJABBERD ?? DEFAULT_PEER;
  if (ctx.options.extra.ejabberd === 'off') return { skipped: 'ejabberd comparison off (--opt ejabberd=off)' };
  if (!existsSync(script)) return { skipped: `no ejabberd peer at ${script} (set ZC_BENCH_EJABBERD): ratio not measured` };
  ctx.log(`peer: ${script} ${args.join(' ')}`);
  const peerCpu = new PeerCpu();
  try {
    const out = await new Promise<string>((resolve, reject) =>
      execFile('bash', [script, ...args.map(String)], { timeout: 600_000, maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    const line = out.trim().split('\n').pop() ?? '';
    const r = JSON.parse(line) as Record<string, unknown>;
    const cpu = peerCpu.stop() ?? 0;
    const delivered = Number(r.delivered);
    return {
      peer: {
        msgs_per_s: Number(r.msgs_per_s),
        deliveries_per_s: Number(r.deliveries_per_s),
        p50_ms: Number(r.p50_ms),
        p99_ms: Number(r.p99_ms),
        delivered,
        expected: Number(r.expected),
        ...(cpu > 0 && delivered > 0 ? { cpu_ms_per_delivery: round((cpu * 1000) / delivered, 4) } : {}),
      },
    };
  } catch (err) {
    return { skipped: `ejabberd peer failed: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    peerCpu.stop();
  }
}

function peerHeadlines(
  peer: { peer?: PeerResult; skipped?: string },
  ours: { p50?: number; p99?: number; msgsPerS?: number; deliveriesPerS?: number; cpuMs?: number; withInfrastructureMs?: number },
): Headline[] {
  if (!peer.peer) return [{ label: `ejabberd: ${peer.skipped}`, value: 0, unit: '' }];
  const p = peer.peer;
  const out: Headline[] = [
    { label: `ejabberd same shape: msg/s ${p.msgs_per_s}, deliveries/s ${p.deliveries_per_s}, p50 ${p.p50_ms} ms, p99 ${p.p99_ms} ms`, value: p.delivered, unit: `of ${p.expected} delivered` },
  ];
  if (ours.p50 !== undefined && p.p50_ms > 0) out.push({ label: 'delivery p50, ours / ejabberd', value: round(ours.p50 / p.p50_ms), unit: '×' });
  if (ours.p99 !== undefined && p.p99_ms > 0) out.push({ label: 'delivery p99, ours / ejabberd', value: round(ours.p99 / p.p99_ms), unit: '×' });
  if (ours.msgsPerS !== undefined && p.msgs_per_s > 0) out.push({ label: 'msg/s, ours / ejabberd', value: round(ours.msgsPerS / p.msgs_per_s), unit: '×', budget: { op: '>=', value: 1 } });
  if (ours.deliveriesPerS !== undefined && p.deliveries_per_s > 0) out.push({ label: 'deliveries/s, ours / ejabberd', value: round(ours.deliveriesPerS / p.deliveries_per_s), unit: '×' });
  if (ours.cpuMs !== undefined && p.cpu_ms_per_delivery) out.push({ label: `CPU per delivery, ours / ejabberd (${p.cpu_ms_per_delivery} ms)`, value: round(ours.cpuMs / p.cpu_ms_per_delivery, 1), unit: '×' });
  if (ours.withInfrastructureMs !== undefined && p.cpu_ms_per_delivery) {
    out.push({ label: `CPU per delivery with PostgreSQL, NATS and Redis, ours / ejabberd (${p.cpu_ms_per_delivery} ms)`, value: round(ours.withInfrastructureMs / p.cpu_ms_per_delivery, 1), unit: '×' });
  }
  return out;
}

// --- scenarios --------------------------------------------------------------------------------

const opt = (ctx: BenchContext, name: string, fallback: number) => Number(ctx.options.extra[name] ?? fallback);

/** Waits until `expected` deliveries were seen or `ms` passed since the last progress. */
async function awaitDeliveries(live: LiveStream, expected: number, ms: number): Promise<void> {
  let seen = live.delivered();
  let progressAt = Date.now();
  while (live.delivered() < expected && Date.now() - progressAt < ms) {
    await sleep(20);
    if (live.delivered() !== seen) {
      seen = live.delivered();
      progressAt = Date.now();
    }
  }
}

/**
 * Where the deliveries' time went, hop by hop (ms): the send (start to acknowledgement, and to
 * the outbox relay's read of its row), the relay's publish, JetStream to the events leader,
 * routing, the append and wake, the wake's trip to the gateway, the answer, and its trip to
 * the client. A poll the wake ended ("woken") has the gateway's hops; one that came in after
 * the event was appended ("found waiting") has only the time from routing to the client.
 */
function hopSummaries(live: LiveStream, startedAt: ReadonlyMap<number, number>, ackedAt: ReadonlyMap<number, number>): Record<string, LatencySummary> {
  const hops = new Map<string, LatencyHistogram>();
  const record = (hop: string, ms: number) => {
    let h = hops.get(hop);
    if (!h) hops.set(hop, (h = new LatencyHistogram()));
    h.record(Math.max(0, ms));
  };
  for (const [n, t0] of startedAt) {
    const acked = ackedAt.get(n);
    if (acked !== undefined) record('send start -> acknowledged', acked - t0);
  }
  for (const d of live.traces) {
    const t0 = startedAt.get(d.message);
    if (t0 === undefined) continue;
    const start = wallClock(t0);
    const e = d.event;
    if (e.relay_read > 0) {
      record('send start -> relay read its row', e.relay_read - start);
      record('relay read -> JetStream stored', e.stored - e.relay_read);
    }
    record('JetStream stored -> events leader has it', e.received - e.stored);
    record('events leader has it -> routed', e.routed - e.received);
    const [sent, heard, ready, written] = d.gateway ?? [];
    if (sent !== undefined && heard !== undefined && ready !== undefined && written !== undefined) {
      record('woken: routed -> appended, wake sent', sent - e.routed);
      record('woken: wake sent -> heard by gateway', heard - sent);
      record('woken: heard -> answer ready', ready - heard);
      record('woken: answer ready -> header set', written - ready);
      record('woken: header set -> client has it', d.arrived - written);
      record('woken: total', d.arrived - start);
    } else {
      record('found waiting: routed -> client has it', d.arrived - e.routed);
      record('found waiting: total', d.arrived - start);
    }
  }
  return Object.fromEntries([...hops].map(([hop, h]) => [hop, h.summary()]));
}

/** Latencies of every delivery from its message's send start, and the last arrival. */
function deliveryLatencies(live: LiveStream, startedAt: Map<number, number>): { hist: LatencySummary; lastArrival: number } {
  const hist = new LatencyHistogram();
  let lastArrival = 0;
  for (const [n, times] of live.arrivals) {
    const t0 = startedAt.get(n);
    if (t0 === undefined) continue;
    for (const t of times) {
      hist.record(Math.max(0, t - t0));
      lastArrival = Math.max(lastArrival, t);
    }
  }
  return { hist: hist.summary(), lastArrival };
}

/**
 * Warm-up before the timed sends, by default until the services' code has settled (`--opt
 * warmup=N` sends exactly N instead, 0 for none). Processes just started spend their CPU on
 * V8 compiling them as much as on their work, and the peer's code is compiled when it loads.
 * A fixed 500 sends was not enough: perf over the burst that followed found TurboFan at
 * 26-46 % of the gateway's, messages' and events' CPU (4-8 % after 8,000 sends), and the
 * services' CPU per delivery was about 1.8 times the figure after 5,000 sends (gateway 29-30
 * against 16-18 µs, messages 12-13 against 7-8, events 9 against 5; 2026-11-27, four runs
 * alternated). So sends go in rounds of WARM_UP_ROUND until a round's CPU per delivery is
 * within WARM_UP_SETTLED of the lowest before it, twice in a row (one round can be quiet by
 * chance on a shared machine), or WARM_UP_MAX_ROUNDS have gone.
 */
const WARM_UP_ROUND = 1000;
const WARM_UP_SETTLED = 0.08;
const WARM_UP_MAX_ROUNDS = 10;
/**
 * Sends of the burst in flight at once. The peer's sender writes all 2,000 stanzas without
 * waiting for anything; an HTTP sender waits for each answer, so with too few connections the
 * figure is the number in flight over the send's round trip, not what the server sustains. The
 * default is where more stopped buying more, measured on two machines (`--opt ejabberd=off`,
 * msg/s, same build each time):
 * - 2026-11-27: 16 gave 467 / 504, 32 gave 664-721, 64 810-838, 128 817-847, 256 799;
 * - 2026-11-28, a faster machine: 64 gave 1,200-1,397 (median 1,318 of five), 128 gave
 *   1,527-1,618 (median 1,561 of five), 256 gave 1,509 / 1,514. The server also spent less
 *   CPU per message with 128 (services 0.9-1.0 s per burst against 1.0-1.3): fuller batches.
 */
const DEFAULT_BURST_CONNECTIONS = 128;

/** Sends `n` warm-up messages (numbered from `from`) as the burst does and waits until their deliveries stop coming. */
async function warmUpSends(live: LiveStream, n: number, from = 0): Promise<number> {
  const before = live.warmUpDelivered();
  const sends: Array<Promise<unknown>> = [];
  for (let i = from; i < from + n; i++) sends.push(live.send(i, { warmUp: true }).catch(() => undefined));
  await Promise.all(sends);
  let seen = live.warmUpDelivered();
  let progressAt = Date.now();
  while (live.warmUpDelivered() - before < n * live.queues && Date.now() - progressAt < 5_000) {
    await sleep(50);
    if (live.warmUpDelivered() !== seen) {
      seen = live.warmUpDelivered();
      progressAt = Date.now();
    }
  }
  return live.warmUpDelivered() - before;
}

/**
 * Warms the system up (see WARM_UP_ROUND): `fixed` sends, or rounds until the services' CPU
 * per delivery settles. Returns the number of sends and each round's CPU per delivery (µs).
 */
async function warmUp(ctx: BenchContext, live: LiveStream, fixed: number | undefined): Promise<{ sends: number; roundsUs: number[] }> {
  if (fixed !== undefined) {
    if (fixed > 0) ctx.log(`warm-up: ${fixed} sends, ${await warmUpSends(live, fixed)}/${fixed * live.queues} deliveries`);
    return { sends: fixed, roundsUs: [] };
  }
  const roundsUs: number[] = [];
  let settledRounds = 0;
  let sends = 0;
  while (roundsUs.length < WARM_UP_MAX_ROUNDS && settledRounds < 2) {
    const cpu0 = ctx.cpuSeconds?.();
    const delivered = await warmUpSends(live, WARM_UP_ROUND, sends);
    const cpu1 = ctx.cpuSeconds?.();
    sends += WARM_UP_ROUND;
    // Without the system's CPU (an external system) there is nothing to settle: one round.
    if (cpu0 === undefined || cpu1 === undefined || delivered === 0) return { sends, roundsUs };
    const us = ((cpu1 - cpu0) / delivered) * 1e6;
    const lowest = Math.min(...roundsUs);
    settledRounds = us >= lowest * (1 - WARM_UP_SETTLED) ? settledRounds + 1 : 0;
    roundsUs.push(round(us, 1));
  }
  ctx.log(`warm-up: ${sends} sends; services' CPU per delivery by round of ${WARM_UP_ROUND}: ${roundsUs.join(', ')} µs`);
  return { sends, roundsUs };
}

async function pacedOrBurst(ctx: BenchContext, mode: 'paced' | 'burst'): Promise<ScenarioResult> {
  const members = opt(ctx, 'members', 50);
  const rate = opt(ctx, 'rate', 100);
  const n = mode === 'paced' ? Math.round(rate * opt(ctx, 'seconds', 10)) : opt(ctx, 'messages', 2000);
  const accounts = await createAccounts(ctx.sys, members, `fan${mode}`);
  const live = await openLiveStream(ctx.sys, { members: accounts, queues: opt(ctx, 'queues', members - 1), senderConnections: opt(ctx, 'connections', mode === 'burst' ? DEFAULT_BURST_CONNECTIONS : 16), log: ctx.log });
  const fixedWarmUp = ctx.options.extra.warmup;
  const warm = await warmUp(ctx, live, fixedWarmUp === undefined || fixedWarmUp === 'auto' ? undefined : Number(fixedWarmUp));
  let accepted = 0;
  const startedAt = new Map<number, number>();
  const ackedAt = new Map<number, number>();
  const failures: Record<string, number> = {};
  const meter = await cpuMeter(ctx);
  // Only for a system this bench started here (its CPU is read from /proc): a system elsewhere
  // does not use this machine's servers.
  const besides = ctx.cpuSeconds && process.platform === 'linux' ? besidesMeter() : undefined;
  const t0 = performance.now();
  const sends: Array<Promise<void>> = [];
  for (let i = 0; i < n; i++) {
    if (mode === 'paced') {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
    }
    startedAt.set(i, performance.now());
    sends.push(
      live.send(i).then(
        (r) => {
          ackedAt.set(i, performance.now());
          if (r.status === 200) accepted++;
          else failures[String(r.status)] = (failures[String(r.status)] ?? 0) + 1;
        },
        (err: Error) => void (failures[err.message] = (failures[err.message] ?? 0) + 1),
      ),
    );
  }
  await Promise.all(sends);
  // Only a send the server accepted (200) owes deliveries; refused ones are reported as failed sends.
  const expected = accepted * live.queues;
  await awaitDeliveries(live, expected, 10_000);
  const cpu = meter();
  const besidesUsed = besides?.();
  const delivered = live.delivered();
  const { hist, lastArrival } = deliveryLatencies(live, startedAt);
  const wallMs = (delivered >= expected ? lastArrival : performance.now()) - t0;
  await live.close();
  ctx.log(`${mode}: ${delivered}/${expected} deliveries in ${Math.round(wallMs)} ms`);
  const hops = live.traces.length > 0 ? hopSummaries(live, startedAt, ackedAt) : undefined;
  for (const [hop, h] of Object.entries(hops ?? {})) {
    ctx.log(`hop ${hop.padEnd(44)} n ${String(h.count).padStart(6)}  p50 ${h.p50.toFixed(2).padStart(8)}  p90 ${h.p90.toFixed(2).padStart(8)}  p99 ${h.p99.toFixed(2).padStart(8)} ms`);
  }
  const msgsPerS = round((n / wallMs) * 1000, 0);
  const deliveriesPerS = round((delivered / wallMs) * 1000, 0);
  const c = cpuHeadlines(cpu, delivered);
  const b = besidesUsed ? besidesHeadlines(besidesUsed, delivered, c.perDeliveryMs) : undefined;
  const peer = await runPeer(ctx, mode === 'paced' ? [members, 'paced', n, rate] : [members, 'burst', n]);
  const floor = mode === 'paced' ? await pacedFloor(ctx, live, rate) : undefined;
  const shape = `${mode === 'paced' ? `${rate} msg/s` : `burst of ${n}`} to ${members}${warm.sends > 0 ? ` (after ${warm.sends} warm-up sends)` : ''}`;
  const headlines: Headline[] = [
    ...(mode === 'paced'
      ? [
          { label: `delivery p50, ${shape}`, value: hist.p50, unit: 'ms', budget: { op: '<' as const, value: 10 } },
          { label: `delivery p99, ${shape}`, value: hist.p99, unit: 'ms', budget: { op: '<' as const, value: 50 } },
        ]
      : [
          { label: `messages/s, ${shape} (until the last delivery)`, value: msgsPerS, unit: 'msg/s' },
          { label: `deliveries/s, ${shape}`, value: deliveriesPerS, unit: '/s' },
          { label: `delivery p50 / p99 from send start: ${hist.p50.toFixed(0)} / ${hist.p99.toFixed(0)}`, value: hist.p99, unit: 'ms' },
        ]),
    { label: 'deliveries lost', value: expected - delivered, unit: '', budget: { op: '<=', value: 0 } },
    ...(Object.keys(failures).length ? [{ label: `sends failed: ${JSON.stringify(failures)}`, value: Object.values(failures).reduce((a, b) => a + b, 0), unit: '' }] : []),
    ...c.headlines,
    ...(b?.headlines ?? []),
    ...floorHeadlines(floor, c.byServiceUs.gateway, live.queues, rate),
    ...peerHeadlines(peer, {
      p50: hist.p50,
      p99: hist.p99,
      ...(mode === 'burst' ? { msgsPerS, deliveriesPerS } : {}),
      ...(c.perDeliveryMs !== undefined ? { cpuMs: c.perDeliveryMs } : {}),
      ...(b?.withInfrastructureMs !== undefined ? { withInfrastructureMs: b.withInfrastructureMs } : {}),
    }),
  ];
  return {
    headlines,
    details: {
      mode,
      members,
      messages: n,
      warm_up_sends: warm.sends,
      warm_up_cpu_us_per_delivery_by_round: warm.roundsUs,
      rate: mode === 'paced' ? rate : 'max',
      delivered,
      expected,
      wall_ms: Math.round(wallMs),
      msgs_per_s: msgsPerS,
      deliveries_per_s: deliveriesPerS,
      delivery: hist,
      send_failures: failures,
      cpu_seconds: cpu.seconds,
      cpu_ms_per_delivery: c.perDeliveryMs,
      cpu_ms_per_delivery_net_of_idle: c.netPerDeliveryMs,
      cpu_us_per_delivery_by_service: c.byServiceUs,
      ...(b ? { cpu_us_per_delivery_infrastructure: b.infrastructureUs, load_generator_cpu_ms_per_delivery: b.loadGeneratorMs } : {}),
      ...(hops ? { hops } : {}),
      ejabberd: peer.peer ?? { skipped: peer.skipped },
      ...(floor ? { long_poll_floor: floor } : {}),
    },
  };
}

/**
 * The paced shape's floor on this machine (floor.ts): a bare Node HTTP server answering as
 * many long-polls, all at once every 1000/rate ms, with an answer of ours. On a machine where
 * waking a process is dear, it tells how much of the gateway's CPU per delivery no Node gateway
 * answering a poll per delivery could save. `--opt floor=off` skips it.
 */
async function pacedFloor(ctx: BenchContext, live: LiveStream, rate: number): Promise<{ skipped: string } | { answers: number; cpu_us_per_answer: number; connections: number; tick_ms: number; answer_bytes: number }> {
  if (ctx.options.extra.floor === 'off') return { skipped: 'long-poll floor off (--opt floor=off)' };
  const body = live.sampleAnswer();
  if (!body) return { skipped: 'no poll answer with one message to serve' };
  const tickMs = 1000 / rate;
  let f: Awaited<ReturnType<typeof longPollFloor>>;
  try {
    f = await longPollFloor(body, { connections: live.queues, tickMs, seconds: 5, warmSeconds: 1 });
  } catch (err) {
    // The scenario's own figures stand without it.
    return { skipped: `long-poll floor failed: ${(err as Error).message}` };
  }
  const bytes = Buffer.byteLength(body);
  ctx.log(`long-poll floor: a bare Node server answering ${live.queues} polls every ${round(tickMs, 1)} ms with one of our answers (${bytes} bytes): ${round(f.cpuUsPerAnswer, 1)} µs CPU per answer (${f.answers} answers)`);
  return { answers: f.answers, cpu_us_per_answer: round(f.cpuUsPerAnswer, 1), connections: live.queues, tick_ms: tickMs, answer_bytes: bytes };
}

function floorHeadlines(floor: Awaited<ReturnType<typeof pacedFloor>> | undefined, gatewayUs: number | undefined, queues: number, rate: number): Headline[] {
  if (!floor) return [];
  if ('skipped' in floor) return [{ label: `long-poll floor: ${floor.skipped}`, value: 0, unit: '' }];
  const label = `long-poll floor: a bare Node server answering ${queues} parked polls every ${round(1000 / rate, 1)} ms, CPU per answer`;
  return [
    { label, value: floor.cpu_us_per_answer, unit: 'µs' },
    ...(gatewayUs !== undefined ? [{ label: 'gateway CPU per delivery / the floor per answer', value: round(gatewayUs / floor.cpu_us_per_answer, 1), unit: '×' }] : []),
  ];
}

const paced = defineScenario({
  name: 'fanout-paced',
  description: 'paced sends (100 msg/s, 10 s) to a stream of 50 live long-polls: delivery p50/p99 from send start, CPU per delivery, ratio to ejabberd',
  default: true,
  run: (ctx) => pacedOrBurst(ctx, 'paced'),
});

const burst = defineScenario({
  name: 'fanout-burst',
  description: 'a burst of 2,000 sends to a stream of 50 live long-polls: msg/s and deliveries/s, CPU per delivery, ratio to ejabberd',
  default: true,
  run: (ctx) => pacedOrBurst(ctx, 'burst'),
});

/**
 * Waits until no message has been written to realm `realmId` for `quietMs`. Subscribing the
 * members makes the notification bot tell each of them whom the owner subscribed to an
 * existing stream ("subscribed you to ..."): ~9,500 direct messages for 10,000 members, which
 * the messages service consumed one by one for minutes, so the timed sends queued behind them
 * on the realm's writer and shared the CPU with them (a CPU profile of the messages service
 * showed those sends until the end of the run). The timed sends start once they are done.
 */
async function awaitRealmQuiet(sys: BenchSystem, realmId: number, log: (l: string) => void, quietMs = 3_000): Promise<void> {
  const infra = sys.infra;
  if (!infra) return;
  const pool = createPool(infra.databaseUrl, { max: 1 });
  const t0 = performance.now();
  try {
    let last = -1;
    let stableSince = performance.now();
    while (performance.now() - t0 < 600_000) {
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM messages.message WHERE realm_id = $1', [realmId]);
      const n = Number(rows[0]?.n);
      if (n !== last) {
        last = n;
        stableSince = performance.now();
      } else if (performance.now() - stableSince >= quietMs) {
        log(`realm quiet: ${n} messages (notification bot) written before the timed sends, waited ${Math.round(performance.now() - t0)} ms`);
        return;
      }
      await sleep(500);
    }
    log(`realm still busy after ${Math.round(performance.now() - t0)} ms: timing anyway`);
  } finally {
    await pool.end();
  }
}

const tenThousand = defineScenario<SeededPeople>({
  name: 'fanout-10k',
  description: 'sends to a stream of 10,000 subscribers (seeded through SQL) with 1,000 live queues: send ack latency, time until every live queue is served',
  default: true,
  needsInProcess: true,
  async setup(sys, options) {
    const members = Number(options.extra.members ?? 10_000);
    const people = await seedPeople(sys, `fanout${members}x${Date.now().toString(36)}`, members);
    return people;
  },
  async run(ctx) {
    const people = ctx.state;
    const members = people.members.length;
    const queues = Math.min(members - 1, opt(ctx, 'queues', 1000));
    const n = opt(ctx, 'messages', 30);
    ctx.log(`${members} accounts seeded in ${Math.round(people.elapsedMs)} ms`);
    const live = await openLiveStream(ctx.sys, {
      members: people.members,
      queues,
      senderConnections: 2,
      realm: { admin: people.owner, host: people.host },
      log: ctx.log,
    });
    await awaitRealmQuiet(ctx.sys, people.realmId, ctx.log);
    const ack = new LatencyHistogram();
    const served = new LatencyHistogram();
    let lost = 0;
    const meter = await cpuMeter(ctx);
    for (let i = 0; i < n; i++) {
      const before = live.delivered();
      const t0 = performance.now();
      const r = await live.send(i);
      ack.record(performance.now() - t0);
      if (r.status !== 200) throw new Error(`send failed: ${r.status} ${r.body}`);
      await awaitDeliveries(live, before + live.queues, 5_000);
      const times = live.arrivals.get(i) ?? [];
      lost += live.queues - times.length;
      if (times.length) served.record(Math.max(...times) - t0);
      await sleep(500);
    }
    const cpu = meter();
    await live.close();
    const a = ack.summary();
    const s = served.summary();
    return {
      headlines: [
        { label: `send acknowledged, stream of ${members} (p50 of ${n}; p90 ${a.p90.toFixed(0)}, max ${a.max.toFixed(0)} ms)`, value: a.p50, unit: 'ms', budget: { op: '<', value: 100 } },
        { label: `every one of ${queues} live queues served (p50; max ${s.max.toFixed(0)} ms)`, value: s.p50, unit: 'ms', budget: { op: '<', value: 1000 } },
        { label: 'deliveries lost', value: lost, unit: '', budget: { op: '<=', value: 0 } },
        ...cpuHeadlines(cpu, live.delivered()).headlines,
      ],
      details: { members, queues, messages: n, ack: a, all_served: s, lost, cpu_seconds: cpu.seconds, cpu_by_service: cpu.byService },
    };
  },
});

export const scenarios: Scenario[] = [paced, burst, tenThousand];

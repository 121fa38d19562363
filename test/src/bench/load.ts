/**
 * Open-model load generation. Requests leave on a fixed schedule (request i at start + i/rate)
 * whether or not earlier ones have answered, and each latency is measured from the moment the
 * request was *due*, not from when it was actually sent. A closed loop (send, wait, send)
 * slows down with the server and so never sees the queueing its users would: that is
 * coordinated omission, and this module is written so it cannot hide latency.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { LatencyHistogram, type LatencySummary } from './histogram.js';

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** Path with query string, e.g. `/api/v1/users/me`. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Outcome label of one successful HTTP exchange that is nevertheless wrong, or undefined when fine. */
export type ResponseCheck = (status: number, body: string) => string | undefined;

export interface LoadTarget {
  /** What is being measured, e.g. `GET /users/me`. */
  name: string;
  /** The request to send as number `i` of the step (vary users or parameters by `i`). */
  request(i: number): RequestSpec;
  /** Optional: inspects successful responses (their body is then read as text). */
  check?: ResponseCheck;
  /**
   * Checks one successful response in this many (request numbers 0, N, 2N, ...; default 1, every
   * one). Reading a large answer as text and scanning it holds the generator's event loop, which
   * delays the requests due meanwhile and so shows in their latency: with every 66 KB presence
   * answer checked, a bare server's p99 was 8 ms against 3.3 ms unchecked.
   */
  checkEvery?: number;
}

export interface StepResult {
  target: string;
  /** Offered rate, requests per second. */
  rate: number;
  durationSeconds: number;
  sent: number;
  completed: number;
  /** Completed requests per second over the step (the drain after it not counted as time). */
  throughput: number;
  /** Latency from the request's due time to its last response byte. */
  latency: LatencySummary;
  /** How late the generator sent requests (due → handed to the HTTP client); high values mean the load machine, not the server, fell behind. */
  sendLag: LatencySummary;
  /** Responses per HTTP status, e.g. `{ "200": 9990, "503": 10 }`. */
  statuses: Record<string, number>;
  /** Error responses per Zulip `code` (`(none)` for error bodies without one). */
  codes: Record<string, number>;
  /** Requests that got no HTTP response, per error (ECONNRESET, timeout, overload, …). */
  transportErrors: Record<string, number>;
  /** Successful responses a check() rejected, per label. */
  checkFailures: Record<string, number>;
  errors: number;
  /** The compressed HdrHistogram of `latency`, for comparing runs. */
  histogram: string;
  /**
   * CPU milliseconds the system's process used per completed request over the step and its
   * drain (services only: PostgreSQL, NATS and Redis are other processes). Less disturbed by
   * a busy machine than latency, so it shows what a change saved.
   */
  systemCpuMsPerRequest?: number;
}

export interface StepOptions {
  rate: number;
  durationSeconds: number;
  /** Requests still unanswered this long after the step's end count as `timeout`. */
  drainTimeoutMs?: number;
  /** Safety cap on unanswered requests; beyond it requests are counted as `overload` and not sent. */
  maxOutstanding?: number;
  /** CPU seconds the measured system has used so far, when known (its cost per request is reported). */
  cpuSeconds?: () => number | undefined;
}

/** HTTP connection pools, one per gateway replica; requests are spread over them in turn. */
export class Targets {
  readonly pools: Pool[];
  constructor(baseUrls: readonly string[], connectionsPerUrl = 64) {
    this.pools = baseUrls.map(
      (u) => new Pool(u, { connections: connectionsPerUrl, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 }),
    );
  }
  pick(i: number): Pool {
    return this.pools[i % this.pools.length] as Pool;
  }
  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

function zulipCode(body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : '(none)';
  } catch {
    return '(not json)';
  }
}

/** Runs one step at a fixed rate and reports what happened. */
export async function runStep(targets: Targets, target: LoadTarget, o: StepOptions): Promise<StepResult> {
  const total = Math.max(1, Math.round(o.rate * o.durationSeconds));
  const intervalMs = 1000 / o.rate;
  const maxOutstanding = o.maxOutstanding ?? 20_000;
  const latency = new LatencyHistogram();
  const sendLag = new LatencyHistogram();
  const statuses: Record<string, number> = {};
  const codes: Record<string, number> = {};
  const transportErrors: Record<string, number> = {};
  const checkFailures: Record<string, number> = {};
  const abort = new AbortController();
  // Every outstanding request listens on the one signal that cuts off the drain.
  setMaxListeners(0, abort.signal);
  let outstanding = 0;
  let completed = 0;
  let errors = 0;
  let drained: (() => void) | undefined;

  const finish = () => {
    outstanding--;
    if (outstanding === 0) drained?.();
  };

  const fire = (i: number, dueAt: number) => {
    if (outstanding >= maxOutstanding) {
      bump(transportErrors, 'overload');
      errors++;
      return;
    }
    outstanding++;
    const spec = target.request(i);
    sendLag.record(performance.now() - dueAt);
    targets
      .pick(i)
      .request({ method: spec.method, path: spec.path, headers: spec.headers, body: spec.body, signal: abort.signal })
      .then(async (res) => {
        const status = res.statusCode;
        const ok = status >= 200 && status < 300;
        // Every body is read to its last byte, which ends the latency; it is kept and decoded
        // only when looked at (undici's dump() gives up on a body past 128 KiB and closes the connection).
        const look = !ok || (target.check !== undefined && i % (target.checkEvery ?? 1) === 0);
        const chunks: Buffer[] = [];
        for await (const chunk of res.body) if (look) chunks.push(chunk as Buffer);
        latency.record(performance.now() - dueAt);
        const body = look ? Buffer.concat(chunks).toString('utf8') : '';
        completed++;
        bump(statuses, String(status));
        if (!ok) {
          errors++;
          bump(codes, zulipCode(body));
        } else if (target.check && look) {
          const failure = target.check(status, body);
          if (failure !== undefined) {
            errors++;
            bump(checkFailures, failure);
          }
        }
      })
      .catch((err: { code?: string; name?: string }) => {
        errors++;
        bump(transportErrors, abort.signal.aborted ? 'timeout' : (err.code ?? err.name ?? 'error'));
      })
      .finally(finish);
  };

  const cpuAtStart = o.cpuSeconds?.();
  const start = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      // Everything due by now goes out in this tick; timers fire about every millisecond.
      const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
      while (next < due) {
        fire(next, start + next * intervalMs);
        next++;
      }
      if (next >= total) resolve();
      else setTimeout(tick, Math.max(0, start + next * intervalMs - performance.now()));
    };
    tick();
  });
  const elapsedMs = performance.now() - start;
  const completedInStep = completed;

  if (outstanding > 0) {
    const timer = setTimeout(() => abort.abort(), o.drainTimeoutMs ?? 10_000);
    await new Promise<void>((resolve) => {
      drained = resolve;
    });
    clearTimeout(timer);
  }
  const cpuAtEnd = o.cpuSeconds?.();
  const cpu = cpuAtStart !== undefined && cpuAtEnd !== undefined && completed > 0 ? { systemCpuMsPerRequest: Math.round(((cpuAtEnd - cpuAtStart) * 1e6) / completed) / 1000 } : {};

  return {
    target: target.name,
    rate: o.rate,
    durationSeconds: o.durationSeconds,
    sent: next,
    completed,
    throughput: Math.round((completedInStep / Math.max(elapsedMs, intervalMs)) * 1000),
    latency: latency.summary(),
    sendLag: sendLag.summary(),
    statuses,
    codes,
    transportErrors,
    checkFailures,
    errors,
    histogram: latency.encoded(),
    ...cpu,
  };
}

/** The Basic authorization header of an account, as Zulip clients send it. */
export function basicAuth(a: { email: string; api_key: string }): string {
  return `Basic ${Buffer.from(`${a.email}:${a.api_key}`).toString('base64')}`;
}

export interface RampOptions {
  rates: number[];
  stepSeconds: number;
  p99BudgetMs: number;
  /** Unrecorded seconds at the first rate, so connections and JIT are warm before measuring. */
  warmupSeconds?: number;
  /** Pause between steps, letting queues empty so one step does not bleed into the next. */
  pauseMs?: number;
  cpuSeconds?: () => number | undefined;
  log?(line: string): void;
}

export interface Ramp {
  steps: StepResult[];
  maxRateHeld: number;
  stoppedBy: 'p99' | 'errors' | 'behind' | 'done';
}

/** Why a step does not count as held, or undefined when it does. */
export function stepVerdict(s: StepResult, p99BudgetMs: number): Ramp['stoppedBy'] | undefined {
  if (s.errors > 0 || s.completed < s.sent) return 'errors';
  if (s.latency.p99 >= p99BudgetMs) return s.sendLag.p99 >= p99BudgetMs ? 'behind' : 'p99';
  return undefined;
}

/** Steps the rate up until a step misses the p99 budget or sees an error. */
export async function rampUp(targets: Targets, target: LoadTarget, o: RampOptions): Promise<Ramp> {
  const steps: StepResult[] = [];
  const first = o.rates[0];
  const warmup = o.warmupSeconds ?? 2;
  const cpu = o.cpuSeconds ? { cpuSeconds: o.cpuSeconds } : {};
  if (first !== undefined && warmup > 0) await runStep(targets, target, { rate: first, durationSeconds: warmup, ...cpu });
  let maxRateHeld = 0;
  for (const rate of o.rates) {
    const s = await runStep(targets, target, { rate, durationSeconds: o.stepSeconds, ...cpu });
    steps.push(s);
    const verdict = stepVerdict(s, o.p99BudgetMs);
    o.log?.(
      `  ${target.name} @ ${rate}/s: p50 ${s.latency.p50} ms, p99 ${s.latency.p99} ms, ${s.throughput}/s done, ${s.errors} errors${verdict ? ` → stop (${verdict})` : ''}`,
    );
    if (verdict) return { steps, maxRateHeld, stoppedBy: verdict };
    maxRateHeld = rate;
    await new Promise((r) => setTimeout(r, o.pauseMs ?? 500));
  }
  return { steps, maxRateHeld, stoppedBy: 'done' };
}

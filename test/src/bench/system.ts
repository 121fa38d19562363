/**
 * The system a benchmark runs against: one the runner starts in a child process
 * (system-child.ts), or an already running gateway named by ZC_BENCH_BASE_URL with an
 * account's credentials.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ApiClient } from '../client.js';
import type { BenchAccount, BenchPeople, BenchSystem } from './scenario.js';

export interface StartedBenchSystem {
  sys: BenchSystem;
  /** Replica counts, for the report. */
  replicas: Record<string, number>;
  /** How the services run: one process each, or all in one. */
  layout?: 'processes' | 'inprocess';
  /** CPU seconds (user + system) the system's own process has used, where it can be read (Linux, own system). */
  cpuSeconds?: () => number | undefined;
  /** CPU seconds used so far by each service (replicas summed; processes layout only). */
  cpuSecondsByService?: () => Record<string, number>;
  /** The first gateway's Prometheus metrics as text (processes layout only). */
  gatewayMetrics?: () => Promise<string>;
  stop(): Promise<void>;
}

/** utime + stime of a process from /proc (Linux; clock ticks are 100 Hz there in practice). */
function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

function makeSystem(p: Omit<BenchSystem, 'client' | 'createUser'>): BenchSystem {
  const client = (a: BenchAccount) => new ApiClient(p.baseUrl, { email: a.email, apiKey: a.api_key }, { userAgent: 'ZulipBench/1.0' });
  return {
    ...p,
    client,
    async createUser(a) {
      const password = a.password ?? randomBytes(12).toString('hex');
      const created = await client(p.admin).post('/users', { email: a.email, password, full_name: a.full_name });
      if (created.status !== 200) throw new Error(`creating ${a.email} failed: ${created.status} ${JSON.stringify(created.body)}`);
      const key = await new ApiClient(p.baseUrl, undefined).post<{ api_key: string; user_id: number; email: string }>('/fetch_api_key', { username: a.email, password });
      if (key.status !== 200) throw new Error(`fetch_api_key for ${a.email} failed: ${key.status} ${JSON.stringify(key.body)}`);
      return { user_id: key.body.user_id, email: key.body.email, api_key: key.body.api_key, full_name: a.full_name };
    },
  };
}

/** Reads an admin server's /metrics. */
function metricsReader(adminUrl: string): () => Promise<string> {
  return async () => {
    const res = await fetch(`${adminUrl}/metrics`);
    if (!res.ok) throw new Error(`${adminUrl}/metrics answered ${res.status}`);
    return res.text();
  };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** An already running gateway (ZC_BENCH_BASE_URL, ZC_BENCH_EMAIL, ZC_BENCH_API_KEY). */
export async function externalSystem(env = process.env): Promise<StartedBenchSystem> {
  const baseUrl = (env.ZC_BENCH_BASE_URL ?? '').replace(/\/+$/, '');
  const email = env.ZC_BENCH_EMAIL;
  const apiKey = env.ZC_BENCH_API_KEY;
  if (!email || !apiKey) throw new Error('ZC_BENCH_BASE_URL needs ZC_BENCH_EMAIL and ZC_BENCH_API_KEY (an account that may create users)');
  // A load generator aimed at someone else's server by mistake is an attack; loopback only unless asked.
  if (!LOOPBACK.has(new URL(baseUrl).hostname) && env.ZC_BENCH_ALLOW_REMOTE !== '1') {
    throw new Error(`refusing to load ${baseUrl}: not a loopback address (set ZC_BENCH_ALLOW_REMOTE=1 if you own it)`);
  }
  const me = await new ApiClient(baseUrl, { email, apiKey }).get<{ user_id: number; full_name: string; email: string }>('/users/me');
  if (me.status !== 200) throw new Error(`GET /users/me with the given credentials answered ${me.status}: ${JSON.stringify(me.body)}`);
  const admin: BenchAccount = { user_id: me.body.user_id, email, api_key: apiKey, full_name: me.body.full_name };
  const gatewayUrls = (env.ZC_BENCH_GATEWAY_URLS ?? baseUrl).split(',').map((u) => u.trim().replace(/\/+$/, ''));
  return {
    sys: makeSystem({ mode: 'external', baseUrl, gatewayUrls, people: {}, admin }),
    replicas: {},
    stop: async () => undefined,
  };
}

interface ChildHello {
  /** `processes`: one process per service replica (their pids below); `inprocess`: all in the child. */
  layout: 'processes' | 'inprocess';
  pids: number[];
  services: Array<{ service: string; pid: number }>;
  gatewayAdminUrls?: string[];
  baseUrl: string;
  gatewayUrls: string[];
  people: Required<BenchPeople>;
  infra: NonNullable<BenchSystem['infra']>;
}

/** Starts the runner's own system in a child process and waits until it serves. */
export async function childSystem(replicas: Record<string, number>): Promise<StartedBenchSystem> {
  const entry = fileURLToPath(new URL('./system-child.js', import.meta.url));
  // ZC_BENCH_SYSTEM_NODE_ARGS: extra node flags for the system's process, e.g. `--cpu-prof
  // --cpu-prof-dir=/tmp/prof` to see where the services spend a run (NODE_OPTIONS refuses those).
  const nodeArgs = (process.env.ZC_BENCH_SYSTEM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, entry], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ZC_BENCH_REPLICAS_JSON: JSON.stringify(replicas) },
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const hello = await new Promise<ChildHello>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => {
      try {
        resolve(JSON.parse(line) as ChildHello);
      } catch (err) {
        reject(err);
      }
    });
    void exited.then((code) => reject(new Error(`bench system exited with ${code} before it was ready`)));
  });
  const sys = makeSystem({
    mode: 'inprocess',
    baseUrl: hello.baseUrl,
    gatewayUrls: hello.gatewayUrls,
    people: hello.people,
    admin: hello.people.iago,
    infra: hello.infra,
  });
  return {
    sys,
    replicas: { users: 1, subscriptions: 1, messages: 1, drafts: 1, uploads: 1, events: 1, gateway: 1, ...replicas },
    layout: hello.layout,
    // The system's CPU is its own process's plus, in the processes layout, every service's.
    cpuSeconds: () => {
      const pids = [...(child.pid === undefined ? [] : [child.pid]), ...hello.pids];
      const each = pids.map(processCpuSeconds);
      return each.some((x) => x === undefined) ? undefined : each.reduce((a, b) => (a as number) + (b as number), 0);
    },
    cpuSecondsByService: () => {
      const out: Record<string, number> = {};
      for (const { service, pid } of hello.services ?? []) out[service] = (out[service] ?? 0) + (processCpuSeconds(pid) ?? 0);
      return out;
    },
    ...(hello.gatewayAdminUrls?.[0] ? { gatewayMetrics: metricsReader(hello.gatewayAdminUrls[0]) } : {}),
    async stop() {
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

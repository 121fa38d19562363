/**
 * The system under test as `npm start -- --replicas ...` runs it: one OS process per service
 * replica (services/<name>/dist/main.js), supervised: a process that dies is started again
 * after a short delay, as a process manager or Kubernetes would. Leaders are found through
 * each process's /metrics (zc_outbox_relay_leader, zc_events_leader).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_NODE_FLAGS } from '@zc/shared/config';
import { freePort, waitPort } from './infra.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const SERVICES = ['users', 'subscriptions', 'messages', 'drafts', 'events', 'gateway'] as const;
export type Service = (typeof SERVICES)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Replica {
  service: Service;
  index: number;
  label: string;
  adminPort: number;
  /** Gateway replicas only. */
  httpPort?: number;
  proc?: ChildProcess;
  paused: boolean;
  /** Set while the suite keeps it down on purpose (no restart). */
  held: boolean;
}

export class Cluster {
  readonly replicas: Replica[] = [];
  private stopping = false;
  private readonly log: WriteStream;

  constructor(
    private readonly env: Record<string, string>,
    logFile: string,
    /** Options given to node before the entry point (e.g. the telemetry preload). */
    private readonly nodeArgs: string[] = [],
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' });
  }

  static async start(env: Record<string, string>, counts: Partial<Record<Service, number>>, logFile: string, nodeArgs: string[] = []): Promise<Cluster> {
    const c = new Cluster(env, logFile, nodeArgs);
    for (const service of SERVICES) {
      for (let index = 0; index < (counts[service] ?? 1); index++) {
        c.replicas.push({
          service,
          index,
          label: `${service}-${index}`,
          adminPort: await freePort(),
          ...(service === 'gateway' ? { httpPort: await freePort() } : {}),
          paused: false,
          held: false,
        });
      }
    }
    // Services with schemas first (migrations), the gateway last.
    for (const r of c.replicas) c.spawn(r);
    for (const r of c.replicas) await c.waitReady(r, 90_000);
    return c;
  }

  get gatewayUrls(): string[] {
    return this.replicas.filter((r) => r.service === 'gateway').map((r) => `http://127.0.0.1:${r.httpPort}`);
  }

  of(service: Service): Replica[] {
    return this.replicas.filter((r) => r.service === service);
  }

  private spawn(r: Replica): void {
    const proc = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...this.nodeArgs, path.join(ROOT, 'services', r.service, 'dist', 'main.js')], {
      env: {
        ...process.env,
        ...this.env,
        ZC_ADMIN_PORT: String(r.adminPort),
        ZC_INSTANCE: r.label,
        ...(r.httpPort ? { ZC_GATEWAY_PORT: String(r.httpPort) } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout?.on('data', (d: Buffer) => this.log.write(`[${r.label}] ${d}`));
    proc.stderr?.on('data', (d: Buffer) => this.log.write(`[${r.label}] ${d}`));
    r.proc = proc;
    r.paused = false;
    proc.once('exit', (code, signal) => {
      this.log.write(`[suite] ${r.label} exited (${signal ?? code})\n`);
      if (r.proc !== proc) return;
      r.proc = undefined;
      if (!this.stopping && !r.held) setTimeout(() => !this.stopping && !r.held && !r.proc && this.spawn(r), 500);
    });
  }

  async metrics(r: Replica): Promise<string | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${r.adminPort}/metrics`, { signal: AbortSignal.timeout(2000) });
      return res.ok ? await res.text() : undefined;
    } catch {
      return undefined;
    }
  }

  async ready(r: Replica): Promise<boolean> {
    try {
      const res = await fetch(`http://127.0.0.1:${r.adminPort}/readyz`, { signal: AbortSignal.timeout(3000) });
      return res.status === 200;
    } catch {
      return false;
    }
  }

  async waitReady(r: Replica, ms = 60_000): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      if (r.proc && (await this.ready(r))) return;
      await sleep(200);
    }
    throw new Error(`${r.label} was not ready within ${ms} ms`);
  }

  /** The replica of `service` whose gauge `metric` is 1, waiting a little for an election. */
  async leader(service: Service, metric = service === 'events' ? 'zc_events_leader' : 'zc_outbox_relay_leader', ms = 20_000): Promise<Replica> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      for (const r of this.of(service)) {
        if (!r.proc || r.paused) continue;
        const text = await this.metrics(r);
        if (text && new RegExp(`^${metric}(\\{[^}]*\\})? 1$`, 'm').test(text)) return r;
      }
      await sleep(200);
    }
    throw new Error(`no ${service} leader (${metric}) within ${ms} ms`);
  }

  async nonLeader(service: Service): Promise<Replica> {
    const l = await this.leader(service);
    const other = this.of(service).find((r) => r !== l && r.proc);
    if (!other) throw new Error(`${service} has a single replica`);
    return other;
  }

  /** SIGKILL; the supervisor starts it again after half a second. Resolves once it is ready again. */
  async kill(r: Replica): Promise<void> {
    const p = r.proc;
    if (!p) return;
    const exited = new Promise<void>((res) => p.once('exit', () => res()));
    p.kill('SIGKILL');
    await exited;
  }

  pause(r: Replica): void {
    r.proc?.kill('SIGSTOP');
    r.paused = true;
  }
  resume(r: Replica): void {
    r.proc?.kill('SIGCONT');
    r.paused = false;
  }

  /** SIGTERM to every replica, waits for all to exit, then starts them all again. */
  async restartAll(): Promise<void> {
    for (const r of this.replicas) r.held = true;
    await Promise.all(
      this.replicas.map(async (r) => {
        const p = r.proc;
        if (!p) return;
        const exited = new Promise<void>((res) => p.once('exit', () => res()));
        p.kill('SIGTERM');
        await exited;
      }),
    );
    for (const r of this.replicas) {
      r.held = false;
      this.spawn(r);
    }
    for (const r of this.replicas) await this.waitReady(r, 90_000);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.replicas.map(async (r) => {
        const p = r.proc;
        if (!p) return;
        if (r.paused) p.kill('SIGCONT');
        const exited = new Promise<void>((res) => p.once('exit', () => res()));
        p.kill('SIGTERM');
        const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(t);
      }),
    );
    this.log.end();
  }

  async waitGateways(): Promise<void> {
    for (const r of this.of('gateway')) await waitPort(r.httpPort as number, true, 60_000);
  }
}

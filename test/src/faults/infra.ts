/**
 * The fault suite's own PostgreSQL cluster, Redis and NATS, on ports of their own and in a
 * temporary directory, so that restarting or killing them touches nobody else. Started and
 * removed by the suite.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export async function waitPort(port: number, up: boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if ((await portOpen(port)) === up) return;
    await sleep(100);
  }
  throw new Error(`port ${port} did not become ${up ? 'open' : 'closed'} within ${ms} ms`);
}

function pgBinDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(path.join(base, v, 'bin', 'initdb'))) return path.join(base, v, 'bin');
  const which = spawnSync('which', ['initdb'], { encoding: 'utf8' });
  if (which.status === 0) return path.dirname(which.stdout.trim());
  throw new Error('initdb not found (install PostgreSQL server binaries)');
}

/** Commands run as the postgres user when we are root (initdb refuses root). */
function asPostgres(cmd: string, args: string[]): { cmd: string; args: string[] } {
  return process.getuid?.() === 0 ? { cmd: 'runuser', args: ['-u', 'postgres', '--', cmd, ...args] } : { cmd, args };
}

function run(cmd: string, args: string[]): void {
  const c = asPostgres(cmd, args);
  const r = spawnSync(c.cmd, c.args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}

export class Postgres {
  readonly dir: string;
  private readonly bin = pgBinDir();
  private constructor(
    readonly port: number,
    root: string,
  ) {
    this.dir = path.join(root, 'pg');
  }

  static async create(root: string): Promise<Postgres> {
    const pg = new Postgres(await freePort(), root);
    mkdirSync(pg.dir, { recursive: true });
    if (process.getuid?.() === 0) {
      const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
      const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
      chownSync(root, Number(id.stdout), Number(gid.stdout));
      chownSync(pg.dir, Number(id.stdout), Number(gid.stdout));
    }
    run(path.join(pg.bin, 'initdb'), ['-D', pg.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    writeFileSync(
      path.join(pg.dir, 'postgresql.auto.conf'),
      [`port = ${pg.port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${pg.dir}'`, 'fsync = off', 'max_connections = 300', 'shared_buffers = 64MB'].join('\n') + '\n',
    );
    if (process.getuid?.() === 0) run('chown', ['postgres', path.join(pg.dir, 'postgresql.auto.conf')]);
    await pg.start();
    return pg;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/zc_faults`;
  }
  get adminUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private ctl(...args: string[]): void {
    run(path.join(this.bin, 'pg_ctl'), ['-D', this.dir, '-l', path.join(this.dir, 'log.txt'), ...args]);
  }

  async start(): Promise<void> {
    this.ctl('start', '-w');
    await waitPort(this.port, true);
  }
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    this.ctl('stop', '-w', '-m', mode);
  }
  /** Stops (fast: sessions terminated cleanly; immediate: crash and recovery) and starts again. */
  async restart(mode: 'fast' | 'immediate'): Promise<void> {
    await this.stop(mode);
    await this.start();
  }
  async remove(): Promise<void> {
    try {
      await this.stop('immediate');
    } catch {
      /* already down */
    }
  }
}

/** A server process we start, stop (SIGTERM), kill (SIGKILL) and start again on the same port. */
class Daemon {
  private proc?: ChildProcess;
  constructor(
    readonly port: number,
    private readonly cmd: string,
    private readonly args: string[],
  ) {}
  async start(): Promise<void> {
    this.proc = spawn(this.cmd, this.args, { stdio: 'ignore' });
    await waitPort(this.port, true);
  }
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    p.kill(signal);
    await exited;
    await waitPort(this.port, false);
  }
}

export class RedisServer extends Daemon {
  static async create(): Promise<RedisServer> {
    const port = await freePort();
    const r = new RedisServer(port, 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await r.start();
    return r;
  }
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }
}

export class NatsServer extends Daemon {
  static async create(root: string): Promise<NatsServer> {
    const port = await freePort();
    const dir = path.join(root, 'nats');
    mkdirSync(dir, { recursive: true });
    const conf = path.join(root, 'nats.conf');
    // A client that stops answering pings (a paused process) is cut off after ~4 s, so
    // requests stop being routed to it; the default (2 min x 2) keeps it for minutes.
    writeFileSync(conf, `port: ${port}\nnet: 127.0.0.1\nping_interval: "2s"\nping_max: 2\njetstream { store_dir: "${dir}" }\n`);
    const n = new NatsServer(port, 'nats-server', ['-c', conf]);
    await n.start();
    return n;
  }
  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }
}

export interface Infra {
  root: string;
  pg: Postgres;
  redis: RedisServer;
  nats: NatsServer;
  remove(): Promise<void>;
}

export async function startInfra(): Promise<Infra> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'zc-faults-'));
  const pg = await Postgres.create(root);
  const redis = await RedisServer.create();
  const nats = await NatsServer.create(root);
  return {
    root,
    pg,
    redis,
    nats,
    async remove() {
      await Promise.allSettled([pg.remove(), redis.stop('SIGKILL'), nats.stop('SIGKILL')]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}

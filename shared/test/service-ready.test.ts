/**
 * /readyz follows the NATS connection: a service whose link to NATS is cut reports 503 while
 * its client reconnects (it could neither serve nor call anyone), and 200 again once back.
 * The cut is made by a TCP relay between the service and the real NATS server.
 */
import net from 'node:net';
import t from 'tap';
import { startService } from '../src/service/index.js';
import { testEnv } from '../src/testing/index.js';

/** A TCP relay to `target` that can drop every connection and refuse new ones, then resume. */
class Relay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

async function readyz(port: number): Promise<{ status: number; body: { checks: Record<string, boolean> } }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: (await res.json()) as { checks: Record<string, boolean> } };
}

async function until<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  let last: T;
  do {
    last = await probe();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  } while (Date.now() < end);
  throw new Error(`${what}: still ${JSON.stringify(last)} after ${ms} ms`);
}

t.test('/readyz is 503 while NATS reconnects, 200 once it is back', async (t) => {
  const env = await testEnv(t);
  const nats = new URL(env.infra.natsUrl);
  const relay = new Relay({ host: nats.hostname, port: Number(nats.port || 4222) });
  await relay.open();
  const svc = await startService(
    { name: 'readytest', start: async () => undefined },
    { config: { ...env.config, natsUrl: `nats://127.0.0.1:${relay.port}` } },
  );
  t.teardown(async () => {
    await relay.cut();
    await svc.stop();
  });

  t.match(await readyz(svc.adminPort), { status: 200, body: { checks: { nats: true } } }, 'ready while connected');
  await relay.cut();
  const down = await until('readiness after the cut', () => readyz(svc.adminPort), (r) => r.status === 503, 5_000);
  t.match(down.body.checks, { nats: false }, 'not ready while the client reconnects');
  t.ok(svc.ctx.bus.isConnected, 'the client is still reconnecting, not closed');
  await relay.open();
  const up = await until('readiness after the relay is back', () => readyz(svc.adminPort), (r) => r.status === 200, 10_000);
  t.match(up.body.checks, { nats: true }, 'ready again once reconnected');
});

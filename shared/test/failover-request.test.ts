/**
 * `Bus.request` fails over: a replica that does not say it took a request within a second
 * (paused: NATS keeps routing to it) costs that second, not the whole timeout, and drops the
 * request if it resumes later; a request held by a replica that falls silent (killed, paused
 * mid-way) goes to another replica when the contract says it is safe, and is answered 503
 * at once otherwise.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { connect } from '@nats-io/transport-node';
import { createInbox, Empty, headers as natsHeaders, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { Bus, rpc } from '../src/bus/index.js';
import { createLogger } from '../src/logging/index.js';
import { testEnv } from '../src/testing/index.js';

const echo = rpc('failtest.v1.echo', { request: Type.Object({ n: Type.Number() }), reply: Type.Object({ n: Type.Number(), by: Type.String() }) });
const echoSafe = rpc('failtest.v1.echo_safe', { safe: true, request: Type.Object({ n: Type.Number() }), reply: Type.Object({ n: Type.Number(), by: Type.String() }) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();

/**
 * A replica as NATS sees it while paused, or killed mid-request: it beats as serving
 * `failtest` and holds subscriptions, but never answers. `acks` makes it acknowledge
 * requests first (it took them, then fell silent); it stops beating on its first request.
 */
async function silentReplica(url: string, prefix: string, name: string, acks: boolean) {
  const nc: NatsConnection = await connect({ servers: url });
  const got: Msg[] = [];
  let beating = true;
  const onRequest = (err: Error | null, m: Msg) => {
    if (err) return;
    got.push(m);
    if (acks) {
      beating = false;
      const h = natsHeaders();
      h.set('Zc-Held-By', name);
      m.respond(Empty, { headers: h });
    }
  };
  for (const c of [echo, echoSafe]) {
    nc.subscribe(`${prefix}.${c.subject}`, { queue: 'failtest', callback: onRequest });
    nc.subscribe(`${prefix}.${c.subject}.${name}`, { callback: onRequest });
  }
  const beat = () => beating && nc.publish(`${prefix}.bus.alive`, enc.encode(JSON.stringify({ replica: name, services: ['failtest'] })));
  beat();
  const timer = setInterval(beat, 1000);
  await nc.flush();
  return {
    got,
    close: async () => {
      clearInterval(timer);
      await nc.close();
    },
  };
}

t.test('requests fail over from a silent replica', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'failover-test', level: 'silent' });
  const server = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'failtest-live', log });
  const client = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'failtest-client', log, defaultTimeoutMs: 8000 });
  let served = 0;
  for (const c of [echo, echoSafe]) server.serve(c, async (r) => (served++, { n: r.n, by: server.replicaId }));
  await server.nc.flush();
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  // Both beats heard.
  await sleep(1200);

  await t.test('a paused replica costs a second, and drops what it gets when it resumes', async (t) => {
    const paused = await silentReplica(env.infra.natsUrl, env.prefix, 'paused-1', false);
    await sleep(1200);
    const took: number[] = [];
    for (let n = 0; n < 12; n++) {
      const started = Date.now();
      t.same(await client.request(echo, { n }), { n, by: server.replicaId });
      took.push(Date.now() - started);
    }
    t.ok(paused.got.length > 0, `the paused replica was asked (${paused.got.length} times)`);
    t.ok(Math.max(...took) < 2000, `every request answered within 2 s (slowest ${Math.max(...took)} ms)`);
    // What the paused replica got carried a start-by time now past: a replica resuming
    // with it drops it (checked against the live one with the same headers).
    const stale = paused.got[0] as Msg;
    const startBy = Number(stale.headers?.get('Zc-Start-By'));
    t.ok(startBy > 0 && startBy < Date.now(), 'the request carried a start-by time, now past');
    const inbox = createInbox();
    const replies: Msg[] = [];
    client.nc.subscribe(inbox, {
      callback: (_e, m) => {
        replies.push(m);
      },
    });
    const before = served;
    client.nc.publish(`${env.prefix}.${echo.subject}.${server.replicaId}`, stale.data, { reply: inbox, headers: stale.headers });
    await sleep(500);
    t.equal(served, before, 'a request past its start-by time is not worked on');
    t.equal(replies.length, 0, 'nor answered');
    await paused.close();
  });

  await t.test('a replica that took a request and fell silent', async (t) => {
    const dying = await silentReplica(env.infra.natsUrl, env.prefix, 'dying-1', true);
    await sleep(1200);
    // Several at once so that some reach the dying replica.
    const started = Date.now();
    const safe = await Promise.all(Array.from({ length: 8 }, (_, n) => client.request(echoSafe, { n }).then((r) => ({ r, ms: Date.now() - started }))));
    t.ok(dying.got.length > 0, `the dying replica took some (${dying.got.length})`);
    t.same(
      safe.map((s) => s.r),
      Array.from({ length: 8 }, (_, n) => ({ n, by: server.replicaId })),
      'a safe request it held is answered by the live replica',
    );
    t.ok(Math.max(...safe.map((s) => s.ms)) < 6500, `within seconds of its silence (slowest ${Math.max(...safe.map((s) => s.ms))} ms, timeout 8 s)`);
    await dying.close();

    const dying2 = await silentReplica(env.infra.natsUrl, env.prefix, 'dying-2', true);
    await sleep(1200);
    const t0 = Date.now();
    const unsafe = await Promise.allSettled(Array.from({ length: 8 }, (_, n) => client.request(echo, { n })));
    t.ok(dying2.got.length > 0, `the second dying replica took some (${dying2.got.length})`);
    const refused = unsafe.filter((u) => u.status === 'rejected');
    t.equal(refused.length, dying2.got.filter((m) => m.subject.includes('echo') && !m.subject.includes('echo_safe')).length, 'an unsafe request it held is not asked again');
    for (const r of refused) t.match((r as PromiseRejectedResult).reason, { code: 'SERVICE_UNAVAILABLE' }, 'it is answered 503');
    t.ok(Date.now() - t0 < 6500, `before the timeout (${Date.now() - t0} ms, timeout 8 s)`);
    await dying2.close();
  });
});

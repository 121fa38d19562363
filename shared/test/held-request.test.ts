/**
 * `Bus.requestHeld`: the replica serving a held request names itself at once; the caller
 * gets the reply, or stops waiting as soon as that replica looks dead, when no replica took
 * the request in time, at its timeout, or when aborted. Errors are the same as `request`'s.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { createInbox, headers } from '@nats-io/nats-core';
import { Bus, RawJson, rpc } from '../src/bus/index.js';
import { AppError } from '../src/errors/index.js';
import { createLogger } from '../src/logging/index.js';
import { testEnv } from '../src/testing/index.js';

const hold = rpc('heldtest.v1.hold', { request: Type.Object({ ms: Type.Number(), fail: Type.Optional(Type.Boolean()) }), reply: Type.Object({ waited: Type.Number() }) });
const nobody = rpc('heldtest.v1.nobody', { request: Type.Object({}), reply: Type.Object({}) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('held requests', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'held-test', level: 'silent' });
  const server = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'held-server', log });
  const client = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'held-client', log });
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  server.serve(
    hold,
    async (r) => {
      await sleep(r.ms);
      if (r.fail) throw new AppError('BAD_REQUEST', 'refused', 400);
      return { waited: r.ms };
    },
    { holder: 'replica-a' },
  );
  await server.nc.flush();

  const holders: string[] = [];
  const alive = (h: string) => {
    holders.push(h);
    return true;
  };
  t.same(await client.requestHeld(hold, { ms: 600 }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive }), { reply: { waited: 600 } }, 'the reply, after the ack came in time');
  t.ok(holders.length > 0 && holders.every((h) => h === 'replica-a'), 'the holder named itself');

  await t.rejects(client.requestHeld(hold, { ms: 10, fail: true }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive }), { code: 'BAD_REQUEST', message: 'refused' }, 'error replies are rethrown');

  let started = Date.now();
  t.same(await client.requestHeld(hold, { ms: 5000 }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: (_h, since) => Date.now() - since < 400 }), { gaveUp: 'holder lost', holder: 'replica-a' }, 'a holder that looks dead is given up');
  t.ok(Date.now() - started < 1500, `at once (${Date.now() - started} ms)`);

  started = Date.now();
  t.same(await client.requestHeld(hold, { ms: 5000 }, { timeoutMs: 700, ackWithinMs: 300, holderAlive: alive }), { gaveUp: 'timeout' }, 'the whole wait has an end');
  t.ok(Date.now() - started < 1500, `at it (${Date.now() - started} ms)`);

  // The caller's own timeout holds even while its event loop is too late for the sweep to
  // judge replicas (every turn blocked longer than two sweeps).
  let outcome: unknown;
  void client.requestHeld(hold, { ms: 5000 }, { timeoutMs: 700, ackWithinMs: 300, holderAlive: alive }).then((o) => (outcome = o));
  started = Date.now();
  while (outcome === undefined && Date.now() - started < 4000) {
    const blockedUntil = Date.now() + 600;
    while (Date.now() < blockedUntil) {
      /* a busy event loop */
    }
    await new Promise((r) => setImmediate(r));
  }
  t.same(outcome, { gaveUp: 'timeout' }, 'the wait ends at its timeout on a lagging event loop');

  const ctrl = new AbortController();
  setTimeout(() => ctrl.abort(), 200);
  t.same(await client.requestHeld(hold, { ms: 5000 }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive, signal: ctrl.signal }), { gaveUp: 'aborted' }, 'the caller can stop waiting');

  // A queue-group member that receives the request and never says so (a paused process).
  server.nc.subscribe(server.subject(nobody.subject), { queue: 'heldtest', callback: () => undefined });
  await server.nc.flush();
  started = Date.now();
  t.same(await client.requestHeld(nobody, {}, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive }), { gaveUp: 'unacknowledged' }, 'a request nobody took is given up');
  t.ok(Date.now() - started < 1500, `after the ack window (${Date.now() - started} ms)`);

  const none = rpc('heldtest.v1.none', { request: Type.Object({}), reply: Type.Object({}) });
  await t.rejects(client.requestHeld(none, {}, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive }), { code: 'SERVICE_UNAVAILABLE' }, 'no responder at all: 503');

  // The ack is for requests still held after 100–200 ms: one answered sooner gets its reply
  // alone (one message fewer per quick long-poll), one held longer gets the ack first.
  const heard = async (ms: number) => {
    const inbox = createInbox();
    const got: string[] = [];
    let done!: () => void;
    const replied = new Promise<void>((r) => (done = r));
    const sub = client.nc.subscribe(inbox, {
      callback: (_e, m) => {
        const by = m.headers?.get('Zc-Held-By');
        got.push(by ? `ack ${by}` : 'reply');
        if (!by) done();
      },
    });
    const h = headers();
    h.set('Zc-Hold-Ack', '1');
    client.nc.publish(client.subject(hold.subject), JSON.stringify({ ms }), { reply: inbox, headers: h });
    await replied;
    sub.unsubscribe();
    return got;
  };
  t.same(await heard(10), ['reply'], 'a quick reply comes without an ack');
  t.same(await heard(400), ['ack replica-a', 'reply'], 'a held request is acknowledged, then answered');

  const raw = await client.requestHeldRaw(hold, { ms: 10 }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive });
  t.ok('reply' in raw && raw.reply instanceof RawJson && raw.reply.text === '{"waited":10}', 'requestHeldRaw: the reply as JSON text');
  await t.rejects(client.requestHeldRaw(hold, { ms: 10, fail: true }, { timeoutMs: 5000, ackWithinMs: 300, holderAlive: alive }), { code: 'BAD_REQUEST', message: 'refused' }, 'requestHeldRaw: error replies are rethrown');

  // Plain requests to a held contract get the reply, never the ack.
  t.same(await client.request(hold, { ms: 50 }), { waited: 50 }, 'request() is unaffected');
});

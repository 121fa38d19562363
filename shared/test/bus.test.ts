/**
 * Request/reply edge cases of the bus over real NATS: what the caller sees when the request
 * or the reply is too large for the server's max_payload, and when nobody serves the subject.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { Bus, RawJson, currentDeadline, event, rpc } from '../src/bus/index.js';
import { AppError } from '../src/errors/index.js';
import { createLogger } from '../src/logging/index.js';
import { testEnv } from '../src/testing/index.js';

const echo = rpc('bustest.v1.echo', {
  request: Type.Object({ text: Type.String(), times: Type.Integer() }),
  reply: Type.Object({ text: Type.String() }),
});
const nobody = rpc('bustest.v1.nobody', { request: Type.Object({}), reply: Type.Object({}) });
const relay = rpc('bustest.v1.relay', { request: Type.Object({}), reply: Type.Object({ deadline: Type.Number(), inner: Type.Number() }) });
const raw = rpc('bustest.v1.raw', { request: Type.Object({ text: Type.String(), fail: Type.Boolean() }), reply: Type.Object({}) });
const deadlineOf = rpc('bustest.v1.deadline', { request: Type.Object({}), reply: Type.Object({ deadline: Type.Number() }) });

t.test('bus request/reply limits', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'bus-test', level: 'silent' });
  const connect = (name: string) => Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name, log, defaultTimeoutMs: 5000 });
  const server = await connect('bus-test-server');
  const client = await connect('bus-test-client');
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  server.serve(echo, async (r) => ({ text: r.text.repeat(r.times) }));
  // A handler may answer JSON text as it is (RawJson); errors still travel as errors.
  server.serve(raw, async (r) => {
    if (r.fail) throw new AppError('BAD_REQUEST', 'Refused on purpose', 400, { extra: 1 });
    return new RawJson(r.text);
  });
  let handled = 0;
  server.serve(deadlineOf, async (_r, ctx) => {
    handled++;
    return { deadline: ctx.deadline ?? -1 };
  });
  // A handler's own requests inherit what is left of its caller's deadline.
  server.serve(relay, async (_r, ctx) => ({ deadline: ctx.deadline ?? -1, inner: (await server.request(deadlineOf, {}, { timeoutMs: 60_000 })).deadline }));
  await server.nc.flush();
  const maxPayload = client.nc.info?.max_payload ?? 0;
  t.ok(maxPayload > 0, `server max_payload ${maxPayload}`);

  t.test('an ordinary round trip', async (t) => {
    t.same(await client.request(echo, { text: 'ab', times: 3 }), { text: 'ababab' });
  });

  t.test('a request over max_payload is the caller\'s 413, refused before sending', async (t) => {
    const started = Date.now();
    const err = await client.request(echo, { text: 'x'.repeat(maxPayload), times: 1 }).catch((e: unknown) => e);
    t.ok(err instanceof AppError);
    t.match(err, { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, message: 'Request body too large' });
    t.ok(Date.now() - started < 1000, 'at once');
  });

  t.test('a large reply that compresses travels gzipped', async (t) => {
    const reply = await client.request(echo, { text: 'y', times: 4 * maxPayload });
    t.equal(reply.text.length, 4 * maxPayload);
  });

  t.test('raw JSON replies pass unparsed, parsed by request() alike', async (t) => {
    const text = '{"a":[1,{"b":"x\\"}"}],"c":null}';
    t.equal((await client.requestRaw(raw, { text, fail: false })).text, text, 'the exact text');
    t.same(await client.request(raw, { text, fail: false }), { a: [1, { b: 'x"}' }], c: null });
    // Large enough to travel gzipped.
    t.equal((await client.requestRaw(echo, { text: 'y', times: 2 * maxPayload })).text, JSON.stringify({ text: 'y'.repeat(2 * maxPayload) }), 'gzipped and back');
    // An ordinary (object) reply asked for raw: its JSON text.
    t.equal((await client.requestRaw(echo, { text: 'ab', times: 2 })).text, '{"text":"abab"}');
    await t.rejects(client.requestRaw(raw, { text, fail: true }), { code: 'BAD_REQUEST', httpStatus: 400, message: 'Refused on purpose', data: { extra: 1 } });
    await t.rejects(client.requestRaw(nobody, {}), { code: 'SERVICE_UNAVAILABLE', httpStatus: 503 });
  });

  t.test('a reply over max_payload even gzipped is a 500 at once, and the server lives on', async (t) => {
    const started = Date.now();
    // Random base64 repeated at a distance beyond gzip's 32 KiB window hardly compresses.
    const noise = randomBytes(48 * 1024).toString('base64');
    const err = await client.request(echo, { text: noise, times: Math.ceil((2 * maxPayload) / noise.length) }).catch((e: unknown) => e);
    t.match(err, { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, message: 'Internal server error' });
    t.ok(Date.now() - started < 2000, `not after the 5 s timeout (${Date.now() - started} ms)`);
    t.same(await client.request(echo, { text: 'ok', times: 1 }), { text: 'ok' }, 'still serving');
  });

  t.test('no responder is a 503 at once, not a timeout', async (t) => {
    const started = Date.now();
    await t.rejects(client.request(nobody, {}), { code: 'SERVICE_UNAVAILABLE', httpStatus: 503, message: 'Service temporarily unavailable, try again' });
    t.ok(Date.now() - started < 1000, `${Date.now() - started} ms`);
  });

  t.test('deadlines travel with requests', async (t) => {
    const before = Date.now();
    const r = await client.request(relay, {}, { timeoutMs: 3000 });
    t.ok(r.deadline >= before + 3000 && r.deadline <= Date.now() + 3000, 'the handler knows when its caller stops waiting');
    t.ok(r.inner <= r.deadline, `a nested request inherits the deadline (${r.inner} <= ${r.deadline}), not its own 60 s`);

    // A request whose caller already gave up (it sat in a paused replica's socket) is not worked on.
    const count = handled;
    const h = natsHeaders();
    h.set('Zc-Deadline', String(Date.now() - 1));
    const late = await client.nc.request(client.subject(deadlineOf.subject), new TextEncoder().encode('{}'), { timeout: 500, headers: h }).catch((e: unknown) => e);
    t.ok(late instanceof Error, 'no reply to an expired request');
    t.equal(handled, count, 'its handler never ran');
    t.equal(currentDeadline(), undefined, 'no deadline outside a handler');
  });
});

const counted = event('bustest.evt.counted', Type.Object({ n: Type.Integer() }));

t.test('consumeBatched hands over every waiting event at once, and retries a failed batch one event at a time', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'bus-test', level: 'silent' });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'bus-batch-test', log, defaultTimeoutMs: 5000 });
  t.teardown(() => bus.close());
  await bus.ensureStream('bustest');
  // Published before the consumer exists: they are all waiting when it starts.
  for (let n = 1; n <= 20; n++) await bus.publish(counted, { n }, { msgId: `b-${n}` });
  const batches: number[][] = [];
  let failOnce = true;
  await bus.consumeBatched([counted], { durable: 'batch-test', batch: 8 }, async (events) => {
    const ns = events.map(([, payload]) => payload.n);
    batches.push(ns);
    // The first batch holding 13 fails: its events come again, one per call.
    if (failOnce && ns.includes(13) && ns.length > 1) {
      failOnce = false;
      throw new Error('boom');
    }
  });
  const deadline = Date.now() + 10_000;
  const seen = () => batches.filter((b) => b.length === 1 || !b.includes(13)).flat();
  while (new Set(seen()).size < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.same([...new Set(seen())].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1), 'every event handled');
  t.ok(batches.some((b) => b.length > 1), `several events per call (${batches.map((b) => b.length).join(',')})`);
  t.ok(batches.every((b) => b.length <= 8), 'never more than the batch size');
  t.same(seen(), [...seen()].sort((a, b) => a - b), 'in stream order');
  const failed = batches.find((b) => b.includes(13) && b.length > 1) ?? [];
  t.ok(failed.every((n) => batches.some((b) => b.length === 1 && b[0] === n)), 'the failed batch went again one event at a time');

  // Acknowledged: a new consumer session of the same durable gets nothing again.
  const again: number[] = [];
  const bus2 = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'bus-batch-test-2', log, defaultTimeoutMs: 5000 });
  t.teardown(() => bus2.close());
  await bus.close();
  await bus2.consumeBatched([counted], { durable: 'batch-test' }, async (events) => void again.push(...events.map(([, p]) => p.n)));
  await new Promise((r) => setTimeout(r, 500));
  t.same(again, [], 'nothing redelivered after the acknowledgements');
});

t.test('consumeBatched with lingerMs: events trickling in a few ms apart are handled together', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'bus-test', level: 'silent' });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'bus-linger-test', log, defaultTimeoutMs: 5000 });
  t.teardown(() => bus.close());
  await bus.ensureStream('bustest');
  const batches: number[][] = [];
  await bus.consumeBatched([counted], { durable: 'linger-test', deliverNew: true, lingerMs: 300 }, async (events) => void batches.push(events.map(([, p]) => p.n)));
  // Ten events 10 ms apart: without lingering each would be a call of its own.
  for (let n = 1; n <= 10; n++) {
    await bus.publish(counted, { n }, { msgId: `l-${n}` });
    await new Promise((r) => setTimeout(r, 10));
  }
  const deadline = Date.now() + 5_000;
  while (batches.flat().length < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.same(batches.flat(), Array.from({ length: 10 }, (_, i) => i + 1), 'every event, in order');
  t.ok(batches.length <= 2, `handled in few calls (${batches.map((b) => b.length).join(',')})`);
});

t.test('publishEncoded: stored once per message id, acknowledged by JetStream, refused where no stream listens', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'bus-test', level: 'silent' });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'bus-publish-test', log });
  t.teardown(() => bus.close());
  const stream = await bus.ensureStream('bustest', 'evt');
  const subject = bus.subject('bustest.evt.v1.thing.happened');
  for (const [msgId, n] of [['a:1', 1], ['a:2', 2], ['a:1', 1]] as const) {
    await bus.publishEncoded(subject, await bus.encodeEvent(JSON.stringify({ n })), msgId);
  }
  const info = await (await bus.jsm()).streams.info(stream);
  t.equal(info.state.messages, 2, 'the repeated message id was dropped by JetStream, and acknowledged all the same');
  await t.rejects(bus.publishEncoded(bus.subject('nostream.evt.v1.x.y'), await bus.encodeEvent('{}'), 'b:1'), /no JetStream stream/);
});

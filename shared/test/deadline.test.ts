/**
 * A request's deadline bounds the database work done for it: a transaction opened while
 * handling a request cannot run past the moment its caller stops waiting.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { Bus, rpc, withCallerSignal } from '../src/bus/index.js';
import { createPool, transaction } from '../src/db/index.js';
import { asOutage } from '../src/errors/index.js';
import { createLogger } from '../src/logging/index.js';
import { testEnv } from '../src/testing/index.js';

const slow = rpc('deadlinetest.v1.slow', { request: Type.Object({ seconds: Type.Number() }), reply: Type.Object({}) });

interface Outcome {
  ms: number;
  err: unknown;
}

/** Serves `slow` with `sleep`, recording how long each call ran and how it ended. */
async function serveSlow(bus: Bus, sleep: (seconds: number) => Promise<unknown>): Promise<Outcome[]> {
  const outcome: Outcome[] = [];
  bus.serve(slow, async (r) => {
    const started = Date.now();
    try {
      await sleep(r.seconds);
      outcome.push({ ms: Date.now() - started, err: undefined });
    } catch (err) {
      outcome.push({ ms: Date.now() - started, err });
      throw err;
    }
    return {};
  });
  await bus.nc.flush();
  return outcome;
}

/** The first recorded outcome, once the handler has ended (it goes on after its caller gave up). */
async function firstOutcome(outcome: Outcome[]): Promise<Outcome | undefined> {
  for (let i = 0; i < 100 && outcome.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
  return outcome[0];
}

t.test('a transaction stops at its request\'s deadline', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'deadline-test', level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 2 });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'deadline-test', log });
  t.teardown(async () => {
    await bus.close();
    await pool.end();
  });
  const outcome = await serveSlow(bus, (seconds) => transaction(pool, (tx) => tx.query('SELECT pg_sleep($1)', [seconds])));

  await t.rejects(bus.request(slow, { seconds: 5 }, { timeoutMs: 800 }), { code: 'SERVICE_UNAVAILABLE' }, 'the caller times out');
  const o = await firstOutcome(outcome);
  t.ok(o && o.ms < 2000, `the statement was cancelled at the deadline (${o?.ms} ms), not after 5 s`);
  t.equal((o?.err as { code?: string })?.code, '57014', 'cancelled by statement_timeout');
  t.equal(asOutage(o?.err)?.httpStatus, 503);

  outcome.length = 0;
  await bus.request(slow, { seconds: 0.1 }, { timeoutMs: 3000 });
  t.equal(outcome[0]?.err, undefined, 'work within the deadline completes');
  const { rows } = await pool.query<{ s: string }>("SELECT current_setting('statement_timeout') AS s");
  t.equal(rows[0]?.s, '0', 'the limit was local to the transaction');
});

t.test("a plain pool query stops at its request's deadline, and every statement at the pool's ceiling", async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'deadline-test', level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 2, applicationName: 'zc-deadline-test' });
  const ceiling = createPool(env.databaseUrl, { max: 1, statementTimeoutMs: 300 });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'deadline-test', log });
  t.teardown(async () => {
    await bus.close();
    await pool.end();
    await ceiling.end();
  });
  const outcome = await serveSlow(bus, (seconds) => pool.query('SELECT pg_sleep($1)', [seconds]));

  await t.rejects(bus.request(slow, { seconds: 5 }, { timeoutMs: 800 }), { code: 'SERVICE_UNAVAILABLE' });
  const o = await firstOutcome(outcome);
  t.ok(o && o.ms < 2000, `cancelled at the deadline (${o?.ms} ms), not after 5 s`);
  t.equal((o?.err as { code?: string })?.code, '57014', 'by a cancel request');
  const { rows: running } = await ceiling.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'zc-deadline-test' AND query LIKE '%pg_sleep%' AND state = 'active'");
  t.equal(running[0]?.n, 0, 'nothing is left running in PostgreSQL');

  outcome.length = 0;
  await bus.request(slow, { seconds: 0.05 }, { timeoutMs: 3000 });
  t.equal(outcome[0]?.err, undefined, 'work within the deadline completes, on a pool that still works');
  t.equal((await pool.query('SELECT 1 AS one')).rows[0]?.one, 1, 'and outside any request there is no deadline');

  const started = Date.now();
  await t.rejects(ceiling.query('SELECT pg_sleep(3)'), { code: '57014' }, 'the ceiling cancels a statement with no deadline');
  t.ok(Date.now() - started < 2000);
  const { rows } = await ceiling.query<{ s: string }>("SELECT current_setting('statement_timeout') AS s");
  t.equal(rows[0]?.s, '300ms');
});

t.test('a caller who leaves stops the work: a plain query and a transaction are cancelled in the serving process', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'deadline-test', level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 3, applicationName: 'zc-leave-test' });
  const watcher = createPool(env.databaseUrl, { max: 1 });
  const server = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'leave-server', log });
  const caller = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'leave-caller', log });
  t.teardown(async () => {
    await caller.close();
    await server.close();
    await pool.end();
    await watcher.end();
  });
  let inTransaction = false;
  const outcome = await serveSlow(server, (seconds) => (inTransaction ? transaction(pool, (tx) => tx.query('SELECT pg_sleep($1)', [seconds])) : pool.query('SELECT pg_sleep($1)', [seconds])));
  const sleeping = async () =>
    (await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'zc-leave-test' AND query LIKE '%pg_sleep%' AND state = 'active'")).rows[0]?.n;

  for (const tx of [false, true]) {
    inTransaction = tx;
    outcome.length = 0;
    const leaving = new AbortController();
    const started = Date.now();
    const call = withCallerSignal(leaving.signal, () => caller.request(slow, { seconds: 8 }, { timeoutMs: 9000 }));
    for (let i = 0; i < 50 && (await sleeping()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(await sleeping(), 1, `${tx ? 'the transaction' : 'the query'} runs`);
    leaving.abort();
    await t.rejects(call, { message: 'The client closed the request' }, 'the caller stops waiting at once');
    const o = await firstOutcome(outcome);
    t.ok(o && Date.now() - started < 3000, `the statement was cancelled when the caller left (${o?.ms} ms), not after 8 s`);
    t.equal((o?.err as { code?: string })?.code, '57014', 'by a cancel request');
    t.equal(await sleeping(), 0, 'nothing is left running in PostgreSQL');
  }

  outcome.length = 0;
  const stays = new AbortController();
  await withCallerSignal(stays.signal, () => caller.request(slow, { seconds: 0.05 }, { timeoutMs: 3000 }));
  t.equal(outcome[0]?.err, undefined, 'a caller who stays gets its answer, from a pool that still works');
});

t.test("a caller who leaves stops the work the handler asked of another service in turn", async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'deadline-test', level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 2, applicationName: 'zc-leave-nested' });
  const watcher = createPool(env.databaseUrl, { max: 1 });
  const inner = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'leave-inner', log });
  const outer = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'leave-outer', log });
  const caller = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'leave-caller', log });
  t.teardown(async () => {
    await caller.close();
    await outer.close();
    await inner.close();
    await pool.end();
    await watcher.end();
  });
  const relay = rpc('deadlinetest.v1.relay', { request: Type.Object({ seconds: Type.Number() }), reply: Type.Object({}) });
  const outcome = await serveSlow(inner, (seconds) => pool.query('SELECT pg_sleep($1)', [seconds]));
  outer.serve(relay, (r) => outer.request(slow, r));
  await outer.nc.flush();
  const sleeping = async () =>
    (await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'zc-leave-nested' AND query LIKE '%pg_sleep%' AND state = 'active'")).rows[0]?.n;

  const leaving = new AbortController();
  const started = Date.now();
  const call = withCallerSignal(leaving.signal, () => caller.request(relay, { seconds: 8 }, { timeoutMs: 9000 }));
  for (let i = 0; i < 50 && (await sleeping()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(await sleeping(), 1, 'the inner service runs the query');
  leaving.abort();
  await t.rejects(call, { message: 'The client closed the request' });
  const o = await firstOutcome(outcome);
  t.ok(o && Date.now() - started < 3000, `the inner statement was cancelled (${o?.ms} ms), not after 8 s`);
  t.equal((o?.err as { code?: string })?.code, '57014');
  t.equal(await sleeping(), 0, 'nothing is left running in PostgreSQL');
});

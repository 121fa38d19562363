/**
 * The outbox relay over real PostgreSQL and JetStream: every row is published once, in id
 * order, with its payload text unchanged, and is deleted only after it was published. With
 * coalescing (OutboxCoalescing), rows of a coalesced subject go out several to an event, every
 * row once, and never after a later row of the same stream.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { Bus, event } from '../src/bus/index.js';
import { createPool, runMigrations, transaction } from '../src/db/index.js';
import { createLogger } from '../src/logging/index.js';
import { addManyToOutbox, addToOutbox, startOutboxRelay } from '../src/outbox/index.js';
import { testEnv } from '../src/testing/index.js';

const SCHEMA = 'relaytest';

/** A test's own schema migrated in its database, a pool and a bus on its prefix; `close` after the relays have stopped. */
async function outboxFixture(t: Parameters<typeof testEnv>[0], schema: string, name: string) {
  const env = await testEnv(t);
  const log = createLogger({ service: name, level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 4 });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name, log });
  await runMigrations(pool, schema, await mkdtemp(path.join(os.tmpdir(), 'zc-outbox-')));
  const close = async () => {
    await bus.close();
    await pool.end();
  };
  return { env, log, pool, bus, close };
}

const until = async (ok: () => boolean | Promise<boolean>, what: string, withinMs = 10_000) => {
  for (let i = 0; i < withinMs / 25; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};
const happened = event('relaytest.evt.v1.thing.happened', Type.Object({ n: Type.Integer(), text: Type.String() }));

t.test('outbox relay', async (t) => {
  const { env, log, pool, bus, close } = await outboxFixture(t, SCHEMA, 'outbox-test');
  const relay = startOutboxRelay({ pool, schema: SCHEMA, bus, log, pollMs: 100 });
  t.teardown(async () => {
    await relay.stop();
    await close();
  });

  const received: Array<{ n: number; text: string }> = [];
  await bus.consume([happened], { durable: 'outbox-test' }, async (_subject, payload) => {
    received.push(payload as { n: number; text: string });
  });
  const pending = async () => Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${SCHEMA}.outbox`)).rows[0]?.n);

  t.test('publishes more than a batch, in id order, each once, and empties the outbox', async (t) => {
    const total = 1234;
    // Several transactions, so that notifications arrive while passes run.
    for (let from = 0; from < total; from += 200) {
      await transaction(pool, async (tx) => {
        for (let n = from; n < Math.min(total, from + 200); n++) await addToOutbox(tx, SCHEMA, happened, { n, text: `é "quoted" ${n}` });
      });
    }
    await until(() => received.length >= total, 'every event');
    t.same(
      received.map((r) => r.n),
      Array.from({ length: total }, (_, n) => n),
    );
    t.equal(received[7]?.text, 'é "quoted" 7', 'payload text unchanged');
    // The last pass's rows are deleted by the next pass (a notification or the poll).
    await until(async () => (await pending()) === 0, 'an empty outbox');
    t.equal(await pending(), 0);
  });

  t.test('many events written in one call keep their order, across statement chunks', async (t) => {
    received.length = 0;
    const total = 4500;
    await transaction(pool, (tx) => addManyToOutbox(tx, SCHEMA, Array.from({ length: total }, (_, n) => ({ c: happened, payload: { n, text: `many ${n}` } }))));
    await until(() => received.length >= total, 'every event');
    t.same(
      received.map((r) => r.n),
      Array.from({ length: total }, (_, n) => n),
      'relayed once each, in the order given',
    );
    await t.rejects(addManyToOutbox(pool, SCHEMA, [{ c: happened, payload: { n: 0, text: randomBytes(1_200_000).toString('base64') } }]), { code: 'BAD_REQUEST', httpStatus: 400 }, 'an event the bus cannot carry is refused at the write');
  });

  t.test('flush leaves nothing behind', async (t) => {
    await addToOutbox(pool, SCHEMA, happened, { n: -1, text: 'last' });
    await relay.flush();
    t.equal(await pending(), 0);
    await until(() => received.some((r) => r.n === -1), 'the flushed event');
  });

  t.test('an event the bus can never carry is moved aside and does not block the ones behind it', async (t) => {
    // Incompressible and over NATS's 1 MiB max_payload even gzipped.
    const huge = randomBytes(1536 * 1024).toString('base64');
    // Large but compressible: travels gzipped and arrives unchanged.
    const large = 'stream name '.repeat(300_000);
    // Refused where it is written: the caller's transaction fails with a 400, nothing is stored.
    await t.rejects(addToOutbox(pool, SCHEMA, happened, { n: -9, text: huge }), { code: 'BAD_REQUEST', httpStatus: 400, message: 'This request changes too much at once; split it into smaller requests' });
    const written = await pool.query(`SELECT 1 FROM ${SCHEMA}.outbox WHERE (payload->>'n')::int = -9`);
    t.equal(written.rowCount, 0, 'nothing was written');
    // A row written around addToOutbox (the messages batch insert writes its rows itself)
    // still cannot block the relay.
    await pool.query(`INSERT INTO ${SCHEMA}.outbox(subject, payload, trace_carrier) VALUES ($1, $2, '{}')`, [happened.subject, JSON.stringify({ n: -10, text: huge })]);
    await addToOutbox(pool, SCHEMA, happened, { n: -11, text: large });
    await addToOutbox(pool, SCHEMA, happened, { n: -12, text: 'behind' });
    await until(() => received.some((r) => r.n === -12), 'the event behind the oversized one');
    t.notOk(received.some((r) => r.n === -10), 'the oversized event was not delivered');
    t.equal(received.find((r) => r.n === -11)?.text, large, 'a large compressible event arrives unchanged');
    const dead = await pool.query<{ reason: string; n: number }>(`SELECT reason, (payload->>'n')::int AS n FROM ${SCHEMA}.outbox_dead`);
    t.same(dead.rows.map((r) => r.n), [-10], 'the oversized event is kept in outbox_dead');
    t.match(dead.rows[0]?.reason, /max_payload/);
    await until(async () => (await pending()) === 0, 'an empty outbox');
  });

  t.test('a database restart (every session terminated) neither crashes nor leaks clients', async (t) => {
    const admin = createPool(env.databaseUrl, { max: 1 });
    t.teardown(() => admin.end());
    // A client checked out while its session is terminated: its 'error' event must not crash us.
    const held = await pool.connect();
    for (let round = 0; round < 5; round++) {
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      await addToOutbox(pool, SCHEMA, happened, { n: 1000 + round, text: 'after restart' }).catch(async () => {
        // The first statement after a restart may still meet a dead idle client.
        await addToOutbox(pool, SCHEMA, happened, { n: 1000 + round, text: 'after restart' });
      });
      await until(() => received.some((r) => r.n === 1000 + round), `the event written after restart ${round + 1}`);
    }
    await t.rejects(held.query('SELECT 1'), 'the terminated checked-out client fails its queries');
    held.release(true);
    await until(async () => (await pending()) === 0, 'an empty outbox');
    // Checked out for good: only the relay leader's own session. The pool may also hold idle
    // clients of the writes, the relay's NOTIFY and its outbox VACUUM (which can be running for
    // a moment, hence the wait); a client lost to a terminated session would stay checked out.
    const checkedOut = () => pool.totalCount - pool.idleCount;
    await until(() => checkedOut() <= 1 && pool.waitingCount === 0, 'every client but the relay leader back in the pool');
    t.ok(checkedOut() <= 1, `no client leaked (pool holds ${pool.totalCount}, ${checkedOut()} checked out, ${pool.waitingCount} waiting)`);
    const started = Date.now();
    await relay.stop();
    t.ok(Date.now() - started < 2000, 'the relay stops at once');
  });
});

const COALESCE_SCHEMA = 'coalescetest';
const counted = event('coalescetest.evt.v1.thing.counted', Type.Object({ n: Type.Integer() }));
const countedMany = event('coalescetest.evt.v1.things.counted', Type.Object({ items: Type.Array(Type.Object({ n: Type.Integer() })) }));
const alsoHappened = event('coalescetest.evt.v1.thing.happened', Type.Object({ n: Type.Integer() }));
const LINGER_MS = 1000;

t.test('outbox relay coalescing', async (t) => {
  const { log, pool, bus, close } = await outboxFixture(t, COALESCE_SCHEMA, 'outbox-coalescing-test');
  const relay = startOutboxRelay({
    pool,
    schema: COALESCE_SCHEMA,
    bus,
    log,
    pollMs: 100,
    coalesce: [{ subject: counted.subject, into: countedMany.subject, field: 'items', lingerMs: LINGER_MS, max: 50 }],
  });
  t.teardown(async () => {
    await relay.stop();
    await close();
  });

  // What the consumer saw, in stream order: each published event, and each item's arrival.
  const seen: Array<{ kind: 'counted' | 'many' | 'other'; n: number[]; at: number }> = [];
  await bus.consume([counted, countedMany, alsoHappened], { durable: 'coalescing-test' }, async (subject, payload, _meta) => {
    const at = Date.now();
    if (subject === countedMany.subject) seen.push({ kind: 'many', n: (payload as { items: Array<{ n: number }> }).items.map((i) => i.n), at });
    else seen.push({ kind: subject === counted.subject ? 'counted' : 'other', n: [(payload as { n: number }).n], at });
  });
  const pending = async () => Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${COALESCE_SCHEMA}.outbox`)).rows[0]?.n);
  const items = (kinds: ReadonlyArray<'counted' | 'many' | 'other'>) => seen.filter((s) => kinds.includes(s.kind)).flatMap((s) => s.n);

  t.test('a run of rows goes out as few events, in order, each row once', async (t) => {
    seen.length = 0;
    await transaction(pool, async (tx) => {
      for (let n = 0; n < 120; n++) await addToOutbox(tx, COALESCE_SCHEMA, counted, { n });
    });
    await until(() => items(['counted', 'many']).length >= 120, 'every counted row');
    t.same(items(['counted', 'many']), Array.from({ length: 120 }, (_, n) => n), 'every row once, in id order');
    t.same(
      seen.map((s) => s.kind),
      ['many', 'many', 'many'],
      'published as events of at most `max` rows',
    );
    await until(async () => (await pending()) === 0, 'an empty outbox');
  });

  t.test('a later row of the same stream never overtakes held rows', async (t) => {
    seen.length = 0;
    await transaction(pool, async (tx) => {
      await addToOutbox(tx, COALESCE_SCHEMA, counted, { n: 1 });
      await addToOutbox(tx, COALESCE_SCHEMA, counted, { n: 2 });
      await addToOutbox(tx, COALESCE_SCHEMA, alsoHappened, { n: 3 });
      await addToOutbox(tx, COALESCE_SCHEMA, counted, { n: 4 });
    });
    await until(() => items(['counted', 'many', 'other']).length >= 4, 'all four rows');
    t.same(items(['counted', 'many', 'other']), [1, 2, 3, 4], 'stream order kept');
    t.same(
      seen.map((s) => s.kind),
      ['many', 'other', 'many'],
    );
    // Rows committed separately within the linger go out together, after it.
    seen.length = 0;
    const started = Date.now();
    await addToOutbox(pool, COALESCE_SCHEMA, counted, { n: 5 });
    await new Promise((r) => setTimeout(r, 50));
    await addToOutbox(pool, COALESCE_SCHEMA, counted, { n: 6 });
    await until(() => items(['counted', 'many']).length >= 2, 'the lingering rows');
    t.same(seen.map((s) => s.n), [[5, 6]], 'one event for both');
    t.ok((seen[0]?.at ?? 0) - started >= LINGER_MS - 50, 'held for the linger');
    await until(async () => (await pending()) === 0, 'an empty outbox');
  });

  t.test('flush publishes held rows at once', async (t) => {
    seen.length = 0;
    await addToOutbox(pool, COALESCE_SCHEMA, counted, { n: 7 });
    await relay.flush();
    await until(() => items(['counted', 'many']).includes(7), 'the flushed row');
    t.equal(await pending(), 0, 'nothing left behind');
  });
});

const QUIET_SCHEMA = 'relayquiet';
const quietThing = event('relayquiet.evt.v1.thing.happened', Type.Object({ n: Type.Integer(), text: Type.String() }));

t.test('outbox writes that wake their relay themselves (LocalOutboxWake)', async (t) => {
  const { log, pool, bus, close } = await outboxFixture(t, QUIET_SCHEMA, 'outbox-quiet-test');
  // Polling is out of reach of the test: only a NOTIFY or `written` can start a pass.
  const relay = startOutboxRelay({ pool, schema: QUIET_SCHEMA, bus, log, pollMs: 600_000 });
  const follower = startOutboxRelay({ pool, schema: QUIET_SCHEMA, bus, log, pollMs: 600_000 });
  // Who hears the outbox's notifications, and a probe channel that shows the earlier ones have arrived.
  const listener = await pool.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.channel));
  await listener.query(`LISTEN ${QUIET_SCHEMA}_outbox`);
  await listener.query('LISTEN relayquiet_probe');
  t.teardown(async () => {
    listener.release();
    await follower.stop();
    await relay.stop();
    await close();
  });
  const received: number[] = [];
  await bus.consume([quietThing], { durable: 'outbox-quiet-test' }, async (_subject, payload) => {
    received.push((payload as { n: number }).n);
  });
  await until(() => relay.leading, 'the first relay leading');
  t.notOk(follower.leading, 'one replica leads');

  const writeQuietly = (n: number) =>
    transaction(pool, async (tx) => {
      await tx.query("SELECT set_config('zc.outbox_quiet', 'on', true)");
      await addToOutbox(tx, QUIET_SCHEMA, quietThing, { n, text: `quiet ${n}` });
    });
  /** Notifications of commits before this one have all been heard once the probe is (they are delivered in commit order). */
  const probe = async () => {
    const before = heard.filter((c) => c === 'relayquiet_probe').length;
    await pool.query("SELECT pg_notify('relayquiet_probe', '')");
    await until(() => heard.filter((c) => c === 'relayquiet_probe').length > before, 'the probe');
  };

  t.test('a quiet write sends no NOTIFY, and `written` relays it', async (t) => {
    await writeQuietly(1);
    await probe();
    t.same(heard.filter((c) => c !== 'relayquiet_probe'), [], 'no notification of the outbox');
    t.same(received, [], 'nothing relayed before the writer says so');
    relay.written();
    await until(() => received.length === 1, 'the quiet row relayed');
    t.same(received, [1]);
  });

  t.test('`written` on a replica that does not lead notifies the leader', async (t) => {
    await writeQuietly(2);
    follower.written();
    await until(() => received.length === 2, 'the row relayed by the leader');
    t.same(received, [1, 2]);
    // The relay may act on the NOTIFY before this test's own connection hears it.
    await probe();
    t.ok(heard.includes(`${QUIET_SCHEMA}_outbox`), 'the follower sent the NOTIFY the write left out');
  });

  t.test('an ordinary write still notifies', async (t) => {
    heard.length = 0;
    await transaction(pool, (tx) => addToOutbox(tx, QUIET_SCHEMA, quietThing, { n: 3, text: 'loud' }));
    await until(() => received.length === 3, 'the row relayed on its NOTIFY');
    t.same(received, [1, 2, 3]);
    await probe();
    t.ok(heard.includes(`${QUIET_SCHEMA}_outbox`), 'the write sent its NOTIFY');
  });
});

const HANDED_SCHEMA = 'relayhanded';
const handedThing = event('relayhanded.evt.v1.thing.happened', Type.Object({ n: Type.Integer(), text: Type.String() }));

t.test('rows handed over by their writer (LocalOutboxWake.written with rows)', async (t) => {
  const { log, pool, bus, close } = await outboxFixture(t, HANDED_SCHEMA, 'outbox-handed-test');
  // No polling: a pass starts on `written` only (its read then dates from that moment).
  const relay = startOutboxRelay({ pool, schema: HANDED_SCHEMA, bus, log, pollMs: 600_000 });
  t.teardown(async () => {
    await relay.stop();
    await close();
  });
  const received: Array<{ n: number; text: string }> = [];
  await bus.consume([handedThing], { durable: 'outbox-handed-test' }, async (_subject, payload) => {
    received.push(payload as { n: number; text: string });
  });
  await until(() => relay.leading, 'the relay leading');
  const pending = async () => Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${HANDED_SCHEMA}.outbox`)).rows[0]?.n);

  /**
   * Writes row `n` quietly (no NOTIFY) with the text 'stored', and answers the row as its
   * writer would hand it over, with the text 'handed': what the consumer gets shows whether the
   * relay published the handed row or read the stored one.
   */
  const writeQuietly = async (n: number) => {
    const { rows } = await transaction(pool, async (tx) => {
      await tx.query("SELECT set_config('zc.outbox_quiet', 'on', true)");
      return tx.query<{ id: number; txid: number }>(`INSERT INTO ${HANDED_SCHEMA}.outbox(subject, payload) VALUES ($1, $2) RETURNING id, txid`, [handedThing.subject, JSON.stringify({ n, text: 'stored' })]);
    });
    const row = rows[0] as { id: number; txid: number };
    return { id: Number(row.id), txid: Number(row.txid), subject: handedThing.subject, payload: JSON.stringify({ n, text: 'handed' }), trace_carrier: null };
  };

  t.test('before the relay has read anything, a handed row is read like any other', async (t) => {
    relay.written([await writeQuietly(1)]);
    await until(() => received.length === 1, 'the first row');
    t.same(received, [{ n: 1, text: 'stored' }]);
  });

  t.test('a row that follows on from what was read is published as handed, without a read', async (t) => {
    relay.written([await writeQuietly(2)]);
    relay.written([await writeQuietly(3), await writeQuietly(4)]);
    await until(() => received.length === 4, 'rows 2 to 4');
    t.same(received.slice(1), [2, 3, 4].map((n) => ({ n, text: 'handed' })));
    t.ok((await pending()) > 0, 'published rows wait for the next pass to delete them');
    await relay.flush();
    t.equal(await pending(), 0, 'the next pass deletes them');
    t.equal(received.length, 4, 'and publishes nothing again');
  });

  t.test('a row nobody handed over, in between, makes the relay read, in id order', async (t) => {
    await writeQuietly(5);
    relay.written([await writeQuietly(6)]);
    await until(() => received.length === 6, 'rows 5 and 6');
    t.same(received.slice(4), [5, 6].map((n) => ({ n, text: 'stored' })));
  });

  t.test('a NOTIFY (another writer committed) makes the relay read', async (t) => {
    const handed = await writeQuietly(7);
    await transaction(pool, (tx) => addToOutbox(tx, HANDED_SCHEMA, handedThing, { n: 8, text: 'loud' }));
    await until(() => received.length === 8, 'rows 7 and 8 after the NOTIFY');
    relay.written([handed]);
    await relay.flush();
    t.same(received.slice(6), [{ n: 7, text: 'stored' }, { n: 8, text: 'loud' }], 'row 7 read, and not published again when handed late');
  });

  t.test('a read older than the lease makes the relay read again', async (t) => {
    relay.written([await writeQuietly(9)]);
    await until(() => received.length === 9, 'row 9');
    t.same(received[8], { n: 9, text: 'handed' });
    await new Promise((r) => setTimeout(r, 3_600));
    relay.written([await writeQuietly(10)]);
    await until(() => received.length === 10, 'row 10');
    t.same(received[9], { n: 10, text: 'stored' });
  });

  t.test('a handed row below one already read (its transaction committed later) makes the relay read', async (t) => {
    // Row 11 takes its id first and commits last.
    const slow = await pool.connect();
    t.teardown(() => slow.release());
    await slow.query('BEGIN');
    await slow.query("SELECT set_config('zc.outbox_quiet', 'on', true)");
    const { rows } = await slow.query<{ id: number; txid: number }>(`INSERT INTO ${HANDED_SCHEMA}.outbox(subject, payload) VALUES ($1, $2) RETURNING id, txid`, [
      handedThing.subject,
      JSON.stringify({ n: 11, text: 'stored' }),
    ]);
    const before = received.length;
    relay.written([await writeQuietly(12)]);
    await until(() => received.length === before + 1, 'row 12');
    t.same(received[before], { n: 12, text: 'stored' }, 'row 12 read (the gap of row 11)');
    await slow.query('COMMIT');
    const row = rows[0] as { id: number; txid: number };
    relay.written([{ id: Number(row.id), txid: Number(row.txid), subject: handedThing.subject, payload: JSON.stringify({ n: 11, text: 'handed' }), trace_carrier: null }]);
    // Left unread, it would go out only when the idle leader's session ends (5 s) and a new one reads.
    await until(() => received.length === before + 2, 'row 11', 3_000);
    t.same(received[before + 1], { n: 11, text: 'stored' }, 'row 11 read, not left for the next poll');
  });
});

const VACUUM_SCHEMA = 'relayvacuum';
const swept = event('relayvacuum.evt.v1.thing.swept', Type.Object({ n: Type.Integer() }));

t.test('the relay vacuums its outbox (vacuum.ts)', async (t) => {
  const { env, log, pool, bus, close } = await outboxFixture(t, VACUUM_SCHEMA, 'outbox-vacuum-test');
  const received: number[] = [];
  await bus.consume([swept], { durable: 'outbox-vacuum-test' }, async (_subject, payload) => {
    received.push((payload as { n: number }).n);
  });
  const vacuumedAt = async () =>
    (await pool.query<{ at: Date | null }>(`SELECT last_vacuum AS at FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'outbox'`, [VACUUM_SCHEMA])).rows[0]?.at ?? null;
  const pending = async () => Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${VACUUM_SCHEMA}.outbox`)).rows[0]?.n);
  /** Writes `count` events in transactions of 20 (so that several passes delete rows) and waits until all are relayed and deleted. */
  const relayed = async (from: number, count: number) => {
    for (let i = from; i < from + count; i += 20) {
      await transaction(pool, async (tx) => {
        for (let n = i; n < Math.min(from + count, i + 20); n++) await addToOutbox(tx, VACUUM_SCHEMA, swept, { n });
      });
    }
    await until(() => received.filter((n) => n >= from && n < from + count).length >= count, 'every event');
    await until(async () => (await pending()) === 0, 'an empty outbox');
  };

  t.test('a role that may not vacuum the table: the relay works on, warns once and never vacuums', async (t) => {
    const role = `relayvacuum_${randomBytes(4).toString('hex')}`;
    await pool.query(`CREATE ROLE ${role} LOGIN`);
    await pool.query(`GRANT USAGE ON SCHEMA ${VACUUM_SCHEMA} TO ${role}`);
    await pool.query(`GRANT SELECT, DELETE ON ${VACUUM_SCHEMA}.outbox TO ${role}`);
    const url = new URL(env.databaseUrl);
    url.username = role;
    const limited = createPool(url.toString(), { max: 3 });
    // The relay logs through a child of the logger it is given, so the lines are caught at the destination.
    const lines: string[] = [];
    const watched = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _enc, done) => done(void lines.push((JSON.parse(chunk.toString()) as { msg: string }).msg)) }));
    const relay = startOutboxRelay({ pool: limited, schema: VACUUM_SCHEMA, bus, log: watched, pollMs: 100, vacuum: { minRows: 10, minIntervalMs: 0 } });
    t.teardown(async () => {
      await relay.stop();
      await limited.end();
      await pool.query(`DROP OWNED BY ${role}`);
      await pool.query(`DROP ROLE ${role}`);
    });
    await relayed(0, 200);
    await relay.stop();
    t.equal(await vacuumedAt(), null, 'no VACUUM ran');
    t.equal(lines.filter((l) => /may not vacuum/.test(l)).length, 1, 'one warning');
    t.notOk(lines.some((l) => /failed/.test(l)), 'nothing failed');
  });

  t.test('dead rows are vacuumed away between autovacuum visits', async (t) => {
    const relay = startOutboxRelay({ pool, schema: VACUUM_SCHEMA, bus, log, pollMs: 100, vacuum: { minRows: 50, minIntervalMs: 0 } });
    t.teardown(() => relay.stop());
    t.equal(await vacuumedAt(), null, 'not vacuumed before');
    await relayed(1000, 300);
    // last_vacuum is set by a manual VACUUM only (autovacuum sets last_autovacuum).
    await until(async () => (await vacuumedAt()) !== null, 'a VACUUM of the outbox');
    t.pass('vacuumed');
  });

  t.teardown(close);
});

t.test("the leader's session, with settings of its own, never goes back to the pool", async (t) => {
  const { log, pool, bus, close } = await outboxFixture(t, 'relaysession', 'outbox-session-test');
  t.teardown(close);
  const relay = startOutboxRelay({ pool, schema: 'relaysession', bus, log, pollMs: 100 });
  await until(() => relay.leading, 'the relay leading');
  await relay.stop();
  // Every session the pool can hand out now: a send written on one with the leader's
  // synchronous_commit = off would be acknowledged before it is durable.
  const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
  const settings = await Promise.all(clients.map(async (c) => (await c.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit));
  for (const c of clients) c.release();
  t.same(settings, ['on', 'on', 'on', 'on']);
});

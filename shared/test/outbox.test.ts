/**
 * The outbox relay over real PostgreSQL and JetStream: every row is published once, in id
 * order, with its payload text unchanged, and is deleted only after it was published.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { Bus, event } from '../src/bus/index.js';
import { createPool, runMigrations } from '../src/db/index.js';
import { createLogger } from '../src/logging/index.js';
import { addToOutbox, startOutboxRelay } from '../src/outbox/index.js';
import { testEnv } from '../src/testing/index.js';

const SCHEMA = 'relaytest';
const happened = event('relaytest.evt.v1.thing.happened', Type.Object({ n: Type.Integer(), text: Type.String() }));

t.test('outbox relay', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'outbox-test', level: 'silent' });
  const pool = createPool(env.databaseUrl, { max: 4 });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'outbox-test', log });
  await runMigrations(pool, SCHEMA, await mkdtemp(path.join(os.tmpdir(), 'zc-outbox-')));
  const relay = startOutboxRelay({ pool, schema: SCHEMA, bus, log, pollMs: 100 });
  t.teardown(async () => {
    await relay.stop();
    await bus.close();
    await pool.end();
  });

  const received: Array<{ n: number; text: string }> = [];
  await bus.consume([happened], { durable: 'outbox-test' }, async (_subject, payload) => {
    received.push(payload as { n: number; text: string });
  });
  const pending = async () => Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ${SCHEMA}.outbox`)).rows[0]?.n);
  const until = async (ok: () => boolean | Promise<boolean>, what: string) => {
    for (let i = 0; i < 200; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  t.test('publishes more than a batch, in id order, each once, and empties the outbox', async (t) => {
    const total = 1234;
    // Several transactions, so that notifications arrive while passes run.
    for (let from = 0; from < total; from += 200) {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        for (let n = from; n < Math.min(total, from + 200); n++) await addToOutbox(c, SCHEMA, happened, { n, text: `é "quoted" ${n}` });
        await c.query('COMMIT');
      } finally {
        c.release();
      }
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

  t.test('flush leaves nothing behind', async (t) => {
    await addToOutbox(pool, SCHEMA, happened, { n: -1, text: 'last' });
    await relay.flush();
    t.equal(await pending(), 0);
    await until(() => received.some((r) => r.n === -1), 'the flushed event');
  });
});

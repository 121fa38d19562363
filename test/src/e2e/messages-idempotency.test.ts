/**
 * Idempotency-Key under concurrency: a send and its retry stored once whether the retry lands
 * in the same write batch as the first attempt (one replica groups concurrent sends of a realm
 * into one transaction) or on another messages replica at the same moment.
 */
import t from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem } from '../harness.js';
import { messagesWorld } from './messages-fixtures.js';

t.test('Idempotency-Key holds within a write batch and across replicas', async (t) => {
  const sys = await startSystem(t, { replicas: { messages: 2 } });
  const w = messagesWorld(sys, t);
  const { hamlet, othello } = sys.people;
  await w.createStream('Retries', [hamlet.user_id, othello.user_id]);
  const db = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => db.end());
  const stored = async (topic: string) =>
    Number((await db.query('SELECT count(*) AS n FROM messages.message WHERE topic = $1', [topic])).rows[0].n);
  const send = (topic: string, key: string, content = key) =>
    sys.client(hamlet).post('/messages', { type: 'stream', to: 'Retries', topic, content } as never, { headers: { 'idempotency-key': key } });

  t.test('first attempt and retry in the same batch', async (t) => {
    // One send occupies the writer; the 40 sends fired meanwhile (20 keys, each twice) wait
    // and go together in the next transaction(s), attempt and retry side by side.
    const keys = Array.from({ length: 20 }, (_, i) => `batch-${i}`);
    const replies = await Promise.all([send('batch', 'opener'), ...keys.flatMap((k) => [send('batch', k), send('batch', k)])]);
    t.same(replies.filter((r) => r.status !== 200).map((r) => r.body), [], 'every send answered 200');
    for (const [i, k] of keys.entries()) {
      const [a, b] = [replies[1 + 2 * i], replies[2 + 2 * i]];
      t.equal(a?.body.id, b?.body.id, `${k}: attempt and retry got the same id`);
    }
    t.equal(new Set(replies.map((r) => r.body.id)).size, 21, 'one id per key');
    t.equal(await stored('batch'), 21, 'one stored message per key');
  });

  t.test('the same key on two replicas at once', async (t) => {
    const keys = Array.from({ length: 30 }, (_, i) => `replicas-${i}`);
    // Two gateways' worth of concurrency through one gateway: NATS spreads the requests over
    // both messages replicas, so a key's copies are written by different replicas.
    const replies = await Promise.all(keys.flatMap((k) => [send('replicas', k), send('replicas', k), send('replicas', k)]));
    t.same(replies.filter((r) => r.status !== 200).map((r) => r.body), [], 'every send answered 200');
    for (const [i, k] of keys.entries()) {
      const ids = new Set(replies.slice(3 * i, 3 * i + 3).map((r) => r.body.id));
      t.equal(ids.size, 1, `${k}: every copy got the same id`);
    }
    t.equal(await stored('replicas'), keys.length, 'one stored message per key');
    const events = (await w.notifications()).filter((n) => n.event.type === 'message' && n.event.message.subject === 'replicas');
    t.equal(events.length, keys.length, 'one message event per key');
  });
});

/**
 * The per-turn batching of Redis commands (RedisBatch) and of NATS writes (coalesceWrites),
 * against the real servers: each caller gets its own answers, in order, and an error stays
 * with the command that caused it; the NATS client still has the shape the coalescing needs,
 * so an upgrade that changes it fails here rather than only logging a warning.
 */
import t from 'tap';
import { connect } from '@nats-io/transport-node';
import { coalesceWrites } from '../src/bus/coalesce.js';
import { createRedis, redisKey, RedisBatch, resultValue } from '../src/redis/index.js';
import { testEnv } from '../src/testing/index.js';

t.test('callers of one turn share a pipeline and each gets its own answers', async (t) => {
  const env = await testEnv(t);
  const redis = createRedis(env.infra.redisUrl);
  t.teardown(() => void redis.disconnect());
  const key = (n: number) => redisKey(env.prefix, 'batch', n);
  const batch = new RedisBatch(redis);

  const [a, b, c] = await Promise.all([
    batch.run((p) => p.set(key(1), 'one').get(key(1))),
    batch.run((p) => p.incr(key(2)).incr(key(2)).incr(key(2))),
    // INCR of a non-number fails; only this caller's slot carries the error.
    batch.run((p) => p.set(key(3), 'x').incr(key(3))),
  ]);
  t.same(a?.map(resultValue), ['OK', 'one'], 'the first caller: its two answers');
  t.same(b?.map(resultValue), [1, 2, 3], 'the second: in the order it queued them');
  t.equal(c?.length, 2);
  t.equal(resultValue(c?.[0]), 'OK');
  t.throws(() => resultValue(c?.[1]), /not an integer/, 'the failing command answers its caller with the error');
  t.same(await batch.run((p) => p.get(key(1))).then((r) => r.map(resultValue)), ['one'], 'a later turn gets a new pipeline');
});

t.test('a batch with a window takes the commands of every turn within it in one pipeline', async (t) => {
  const env = await testEnv(t);
  const redis = createRedis(env.infra.redisUrl);
  t.teardown(() => void redis.disconnect());
  const key = (n: number) => redisKey(env.prefix, 'window', n);
  let pipelines = 0;
  const pipeline = redis.pipeline.bind(redis);
  redis.pipeline = ((...args: Parameters<typeof pipeline>) => (pipelines++, pipeline(...args))) as typeof redis.pipeline;
  const batch = new RedisBatch(redis, { windowMs: 60 });

  const started = performance.now();
  const first = batch.run((p) => p.incr(key(1)));
  await new Promise((r) => setTimeout(r, 10));
  const second = batch.run((p) => p.incr(key(1)).get(key(1)));
  const [a, b] = await Promise.all([first, second]);
  t.equal(pipelines, 1, 'commands queued 10 ms apart went in one pipeline');
  t.same(a.map(resultValue), [1], 'the first caller: its answer');
  t.same(b.map(resultValue), [2, '2'], 'the second: its answers, after the first');
  t.ok(performance.now() - started >= 55, 'the batch waited for its window');
  await batch.run((p) => p.get(key(1)));
  t.equal(pipelines, 2, 'a command after the window gets a new pipeline');
});

t.test('NATS writes coalesced per turn keep their order', async (t) => {
  const env = await testEnv(t);
  const nc = await connect({ servers: env.infra.natsUrl });
  t.teardown(() => nc.close());
  t.ok(coalesceWrites(nc), 'the client has the protocol shape coalescing relies on');
  const subject = `${env.prefix}.batching`;
  const got: number[] = [];
  const sub = nc.subscribe(subject, { callback: (_err, m) => void got.push(Number(new TextDecoder().decode(m.data))) });
  await nc.flush();
  for (let n = 0; n < 500; n++) nc.publish(subject, new TextEncoder().encode(String(n)));
  // A large payload goes out at once (past the pending limit) and stays in its place.
  nc.publish(subject, new TextEncoder().encode(`500${' '.repeat(200_000)}`));
  for (let n = 501; n < 600; n++) nc.publish(subject, new TextEncoder().encode(String(n)));
  for (let i = 0; i < 100 && got.length < 600; i++) await new Promise((r) => setTimeout(r, 20));
  sub.unsubscribe();
  t.same(got, Array.from({ length: 600 }, (_, n) => n), 'every message, in the order published');
});

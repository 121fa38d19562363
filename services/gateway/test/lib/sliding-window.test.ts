/** The rolling-window counter against real Redis, with a short window so the test can watch it roll. */
import t from 'tap';
import { createRedis } from '@zc/shared/redis';
import { testEnv } from '@zc/shared/testing';
import { queueWindowCheck, windowState, type WindowMode } from '../../src/lib/sliding-window.js';

t.test('sliding window', async (t) => {
  const env = await testEnv(t);
  const redis = createRedis(env.infra.redisUrl);
  t.teardown(() => redis.quit());
  const WINDOW = 1000;
  const check = async (key: string, limit: number, mode: WindowMode = 'hit') => {
    const p = redis.pipeline();
    queueWindowCheck(p, `${env.prefix}:${key}`, limit, WINDOW, mode);
    const [[err, raw] = [null, null]] = (await p.exec()) ?? [];
    if (err) throw err;
    return windowState(raw, limit, WINDOW);
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  t.test('counts up to the limit, then refuses without counting', async (t) => {
    for (let i = 1; i <= 3; i++) t.match(await check('a', 3), { allowed: true, count: i, retryAfterSeconds: 0 });
    const refused = await check('a', 3);
    t.match(refused, { allowed: false, count: 3 });
    t.ok(refused.retryAfterSeconds > 0 && refused.retryAfterSeconds <= 1, `retry after ${refused.retryAfterSeconds} s`);
    t.ok(refused.resetEpochSeconds >= Date.now() / 1000, 'reset is in the future');
  });

  t.test('no burst of twice the limit around a boundary: the window rolls', async (t) => {
    for (let i = 0; i < 3; i++) t.equal((await check('b', 3)).allowed, true);
    await sleep(600);
    // A fixed one-second window starting at the first request would have reset by now about
    // half of the time; a rolling window still holds the three.
    t.equal((await check('b', 3)).allowed, false, '600 ms later: still full');
    await sleep(500);
    t.equal((await check('b', 3)).allowed, true, 'a window after the first requests: room again');
  });

  t.test('peek looks without counting', async (t) => {
    for (let i = 0; i < 5; i++) t.match(await check('c', 2, 'peek'), { allowed: true, count: 0 });
    await check('c', 2);
    await check('c', 2);
    t.match(await check('c', 2, 'peek'), { allowed: false, count: 2 });
  });

  t.test('a key lives no longer than its window', async (t) => {
    await check('d', 2);
    const ttl = await redis.pttl(`${env.prefix}:d`);
    t.ok(ttl > 0 && ttl <= WINDOW, `pttl ${ttl}`);
  });
});

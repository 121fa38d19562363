/**
 * Several replicas side by side (DESIGN.md: nothing assumes a single replica): two gateways
 * and two users services on one prefix share the work, survive losing a users replica,
 * drop revoked credentials on every gateway, and answer 503 (never hang) when no users
 * replica is left.
 */
import t from 'tap';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doDeactivateUser, doRegenerateApiKey, makeDeps } from '@zc/users/manage';
import type { ApiClient } from '../client.js';
import { startSystem, type Account, type System } from '../harness.js';

/** Polls `probe` until it returns true or `ms` pass; returns how long it took, or undefined. */
async function within(ms: number, probe: () => Promise<boolean>): Promise<number | undefined> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await probe()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

/** The four foundation endpoints through one gateway; returns their statuses. */
async function callAll(sys: System, baseUrl: string, n: number): Promise<number[]> {
  const { iago, hamlet, desdemona } = sys.people;
  const as = (a: Account): ApiClient => sys.client(a, { baseUrl });
  return [
    (await as(hamlet).get('/users/me')).status,
    (await as(hamlet).get('/users')).status,
    (await as(hamlet).get(`/users/${desdemona.user_id}`)).status,
    (await as(iago).post('/users', { email: `replica${n}@zulip.test`, password: 'pw-replicas-1', full_name: `Replica ${n}` })).status,
    (await sys.anonymous({ baseUrl }).post('/fetch_api_key', { username: hamlet.email, password: hamlet.password })).status,
  ];
}

t.test('two gateway and two users replicas', async (t) => {
  const sys = await startSystem(t, { replicas: { gateway: 2, users: 2 } });
  t.equal(sys.gatewayUrls.length, 2);
  t.equal(sys.services.get('users')?.length, 2);
  const [gwA, gwB] = sys.gatewayUrls as [string, string];
  const pool = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => pool.end());
  const deps = makeDeps({ pool, config: loadConfig(sys.env.config), log: createLogger({ service: 'test', level: 'silent' }) });

  let created = 0;
  t.test('every endpoint answers through both gateways, and both users replicas take requests', async (t) => {
    const users = sys.services.get('users') ?? [];
    const before = users.map((s) => s.ctx.bus.nc.stats().outMsgs);
    for (let round = 0; round < 6; round++) {
      for (const url of [gwA, gwB]) t.same(await callAll(sys, url, created++), [200, 200, 200, 200, 200], `round ${round} via ${url}`);
    }
    // 60 requests spread by the NATS queue group: each replica replied to some of them.
    const replied = users.map((s, i) => s.ctx.bus.nc.stats().outMsgs - (before[i] ?? 0));
    t.ok(replied.every((n) => n > 0), `both users replicas replied (${replied.join(' / ')})`);
  });

  t.test('a new API key stops the old one on both gateways at once', async (t) => {
    const { hamlet } = sys.people;
    // Warm both gateways' auth caches (30 s TTL), so only invalidation can stop the old key in time.
    for (const url of [gwA, gwB]) t.equal((await sys.client(hamlet, { baseUrl: url }).get('/users/me')).status, 200);
    const newKey = await doRegenerateApiKey(deps, sys.realmId, hamlet.user_id);
    for (const url of [gwA, gwB]) {
      const took = await within(3000, async () => (await sys.client(hamlet, { baseUrl: url }).get('/users/me')).status === 401);
      t.ok(took !== undefined, `old key refused by ${url} within 3 s (${took} ms)`);
      const old = await sys.client(hamlet, { baseUrl: url }).get('/users/me');
      t.same(old.body, { result: 'error', msg: 'Invalid API key', code: 'INVALID_API_KEY' });
      const fresh = await sys.client({ ...hamlet, api_key: newKey }, { baseUrl: url }).get('/users/me');
      t.equal(fresh.status, 200, 'the new key works');
    }
    const fetched = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password });
    t.equal(fetched.body.api_key, newKey, 'fetch_api_key hands out the new key');
    hamlet.api_key = newKey;
  });

  t.test('deactivating a user stops their credentials on both gateways', async (t) => {
    const { othello } = sys.people;
    for (const url of [gwA, gwB]) t.equal((await sys.client(othello, { baseUrl: url }).get('/users/me')).status, 200);
    t.equal(await doDeactivateUser(deps, sys.realmId, othello.user_id), true);
    for (const url of [gwA, gwB]) {
      const took = await within(3000, async () => (await sys.client(othello, { baseUrl: url }).get('/users/me')).status === 401);
      t.ok(took !== undefined, `deactivated user refused by ${url} within 3 s (${took} ms)`);
      const r = await sys.client(othello, { baseUrl: url }).get('/users');
      t.same(r.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
    }
    const listed = await sys.client(sys.people.hamlet).get('/users');
    const o = (listed.body.members as Array<{ user_id: number; is_active: boolean }>).find((m) => m.user_id === othello.user_id);
    t.equal(o?.is_active, false, 'others see the account as inactive');
  });

  t.test('losing one users replica keeps every endpoint working', async (t) => {
    await sys.stopService('users', 0);
    t.equal(sys.services.get('users')?.length, 1);
    for (const url of [gwA, gwB]) t.same(await callAll(sys, url, created++), [200, 200, 200, 200, 200], `via ${url}`);
  });

  t.test('with no users replica the gateway answers 503 at once, then recovers', async (t) => {
    await sys.stopService('users', 0);
    t.equal(sys.services.get('users')?.length, 0);
    const stranger = { ...sys.people.desdemona, api_key: 'B'.repeat(32) };
    for (const url of [gwA, gwB]) {
      for (const [what, call] of [
        ['cached credentials', () => sys.client(sys.people.hamlet, { baseUrl: url }).get('/users/me')],
        ['uncached credentials', () => sys.client(stranger, { baseUrl: url }).get('/users')],
        ['no credentials', () => sys.anonymous({ baseUrl: url }).post('/fetch_api_key', { username: 'a@zulip.test', password: 'b' })],
      ] as const) {
        const start = Date.now();
        const r = await call();
        const took = Date.now() - start;
        t.equal(r.status, 503, `${what} via ${url}`);
        t.same(r.body, { result: 'error', msg: 'Service temporarily unavailable, try again', code: 'SERVICE_UNAVAILABLE' }, 'the envelope, no detail');
        t.ok(took < 2000, `answered in ${took} ms, not after a timeout`);
      }
    }
    await sys.startReplica('users');
    const took = await within(5000, async () => (await sys.client(sys.people.hamlet).get('/users/me')).status === 200);
    t.ok(took !== undefined, `a new users replica serves again (${took} ms)`);
    t.same(await callAll(sys, gwB, created++), [200, 200, 200, 200, 200]);
  });
});

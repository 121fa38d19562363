/**
 * Credentials (issue 13): a revocation holds on every gateway replica once the call that made
 * it has answered, whatever the cache's TTL and however late the NATS invalidation arrives;
 * parallel wrong passwords cannot race past the login lockout; failed authentications are
 * throttled per client address.
 */
import t from 'tap';
import { ApiClient, type Params } from '../client.js';
import { startSystem } from '../harness.js';

t.test('revocation holds on every replica when the call answers', async (t) => {
  // A long cache TTL: only the credential tokens can make a replica notice.
  const sys = await startSystem(t, { replicas: { gateway: 2 }, gateway: { authCacheTtlMs: 600_000 } });
  const [gwA, gwB] = sys.gatewayUrls as [string, string];
  const as = (url: string, email: string, apiKey: string) => new ApiClient(url, { email, apiKey });

  t.test('a regenerated API key: the old one is refused at once by the other replica', async (t) => {
    const { hamlet } = sys.people;
    let key = hamlet.api_key;
    for (let round = 0; round < 5; round++) {
      // Both replicas hold the current key in their caches.
      for (const url of [gwA, gwB]) t.equal((await as(url, hamlet.email, key).get('/users/me')).status, 200);
      const r = await as(gwA, hamlet.email, key).post('/users/me/api_key/regenerate');
      t.equal(r.status, 200);
      const old = await as(gwB, hamlet.email, key).get('/users/me');
      t.equal(old.status, 401, `round ${round}: old key refused on the other replica`);
      t.match(old.body, { result: 'error', code: 'INVALID_API_KEY', msg: 'Invalid API key' });
      key = r.body.api_key as string;
      t.equal((await as(gwB, hamlet.email, key).get('/users/me')).status, 200, 'the new key works');
    }
  });

  t.test('a deactivated user is refused at once by the other replica', async (t) => {
    const { iago, othello } = sys.people;
    for (const url of [gwA, gwB]) t.equal((await as(url, othello.email, othello.api_key).get('/users/me')).status, 200);
    const r = await as(gwA, iago.email, iago.api_key).delete(`/users/${othello.user_id}`);
    t.equal(r.status, 200);
    const after = await as(gwB, othello.email, othello.api_key).get('/users/me');
    t.equal(after.status, 401);
    t.match(after.body, { result: 'error', code: 'USER_DEACTIVATED', msg: 'Account is deactivated' });
  });

  t.test('a role change reaches the actor every replica hands to the services at once', async (t) => {
    const { iago, polonius } = sys.people;
    // Polonius is a guest: guests may not create streams (Zulip's can_create_public_channel_group).
    for (const url of [gwA, gwB]) t.equal((await as(url, polonius.email, polonius.api_key).get('/users/me')).status, 200);
    const promote = await as(gwA, iago.email, iago.api_key).patch(`/users/${polonius.user_id}`, { role: 400 });
    t.equal(promote.status, 200);
    const sub = await as(gwB, polonius.email, polonius.api_key).post('/users/me/subscriptions', { subscriptions: [{ name: 'promoted at once' }] });
    t.equal(sub.status, 200, 'the member role counts on the other replica');
  });

  t.test('a bot is refused at once on the other replica when its owner is deactivated', async (t) => {
    const { iago } = sys.people;
    const owner = await sys.createUser({ email: 'cache-owner@zulip.test', full_name: 'Cache Owner' });
    const bot = await sys.createUser({ email: 'cache-bot@zulip.test', full_name: 'Cache bot', is_bot: true });
    // No POST /bots yet: the harness's bots belong to iago, so this one is handed over in SQL.
    await sys.services.get('users')![0]!.ctx.pool.query('UPDATE users.user_profile SET bot_owner_id = $1 WHERE id = $2', [owner.user_id, bot.user_id]);
    for (const url of [gwA, gwB]) t.equal((await as(url, bot.email, bot.api_key).get('/users/me')).status, 200);
    t.equal((await as(gwA, iago.email, iago.api_key).delete(`/users/${owner.user_id}`)).status, 200);
    const after = await as(gwB, bot.email, bot.api_key).get('/users/me');
    t.equal(after.status, 401);
    t.match(after.body, { result: 'error', code: 'USER_DEACTIVATED' });
  });

  // The ping route checks a cached key's tokens inside its own Redis script (auth plugin's credentialsCheckedByRoute).
  t.test('presence pings, whose script checks the cached key, are refused at once too', async (t) => {
    const { iago } = sys.people;
    const pinger = await sys.createUser({ email: 'cache-pinger@zulip.test', full_name: 'Cache Pinger' });
    const ping = (url: string, key: string, body: Params = { status: 'active', ping_only: true }) => as(url, pinger.email, key).post('/users/me/presence', body);
    let key = pinger.api_key;
    t.equal((await ping(gwA, key)).status, 200, 'comes online');
    t.equal((await ping(gwB, key)).status, 200, 'a steady ping, key now cached on B');
    const regenerated = await as(gwA, pinger.email, key).post('/users/me/api_key/regenerate');
    t.equal(regenerated.status, 200);
    for (const body of [{ status: 'active', ping_only: true }, { status: 'idle', slim_presence: true }, { status: 'asleep' }]) {
      const old = await ping(gwB, key, body);
      t.equal(old.status, 401, `old key refused: ${JSON.stringify(body)}`);
      t.match(old.body, { result: 'error', code: 'INVALID_API_KEY', msg: 'Invalid API key' });
    }
    key = regenerated.body.api_key as string;
    t.equal((await ping(gwB, key)).status, 200, 'the new key pings');
    t.equal((await ping(gwB, key)).status, 200, 'and again from the cache');
    t.equal((await as(gwA, iago.email, iago.api_key).patch(`/users/${pinger.user_id}`, { full_name: 'Cache Pinger Renamed' })).status, 200);
    t.equal((await ping(gwB, key)).status, 200, 'moved tokens of a key still valid: re-checked and stored');
    t.equal((await as(gwA, iago.email, iago.api_key).delete(`/users/${pinger.user_id}`)).status, 200);
    for (const body of [{ status: 'active', ping_only: true }, { status: 'active', slim_presence: true }]) {
      const after = await ping(gwB, key, body);
      t.equal(after.status, 401, `deactivated: ${JSON.stringify(body)}`);
      t.match(after.body, { result: 'error', code: 'USER_DEACTIVATED', msg: 'Account is deactivated' });
    }
    const listed = (await as(gwB, iago.email, iago.api_key).get('/realm/presence', { slim_presence: true })).body.presences as Record<string, unknown>;
    t.notOk(listed[String(pinger.user_id)], 'no ping brought the deactivated user back');
  });

  // GET /events checks a cached key's tokens inside its poll script (credentialsCheckedByRoute) too.
  t.test('event polls, whose script checks the cached key, are refused at once too', async (t) => {
    const { iago } = sys.people;
    const poller = await sys.createUser({ email: 'cache-poller@zulip.test', full_name: 'Cache Poller' });
    let key = poller.api_key;
    const reg = await as(gwA, poller.email, key).post('/register', { event_types: ['drafts'] });
    const queueId = reg.body.queue_id as string;
    const poll = (k: string, extra: Params = {}) => as(gwB, poller.email, k).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true, ...extra });
    t.equal((await poll(key)).status, 200, 'polls, key now cached on B');
    t.equal((await poll(key)).status, 200, 'from the cache');
    const regenerated = await as(gwA, poller.email, key).post('/users/me/api_key/regenerate');
    t.equal(regenerated.status, 200);
    for (const extra of [{}, { dont_block: false }, { last_event_id: 'x' }]) {
      const old = await poll(key, extra);
      t.equal(old.status, 401, `old key refused: ${JSON.stringify(extra)}`);
      t.match(old.body, { result: 'error', code: 'INVALID_API_KEY', msg: 'Invalid API key' });
    }
    key = regenerated.body.api_key as string;
    t.same((await poll(key)).body, { result: 'success', msg: '', events: [] }, 'the new key polls');
    t.equal((await as(gwA, iago.email, iago.api_key).patch(`/users/${poller.user_id}`, { full_name: 'Cache Poller Renamed' })).status, 200);
    t.equal((await poll(key)).status, 200, 'moved tokens of a key still valid: re-checked, then polled');
    t.equal((await as(gwA, iago.email, iago.api_key).delete(`/users/${poller.user_id}`)).status, 200);
    const after = await poll(key, { dont_block: false });
    t.equal(after.status, 401, 'deactivated: a poll that would park is refused');
    t.match(after.body, { result: 'error', code: 'USER_DEACTIVATED', msg: 'Account is deactivated' });
  });

  t.test("a bot's presence ping is refused at once when its owner is deactivated", async (t) => {
    const { iago } = sys.people;
    const owner = await sys.createUser({ email: 'ping-owner@zulip.test', full_name: 'Ping Owner' });
    const bot = await sys.createUser({ email: 'ping-bot@zulip.test', full_name: 'Ping bot', is_bot: true });
    await sys.services.get('users')![0]!.ctx.pool.query('UPDATE users.user_profile SET bot_owner_id = $1 WHERE id = $2', [owner.user_id, bot.user_id]);
    const ping = () => as(gwB, bot.email, bot.api_key).post('/users/me/presence', { status: 'active', ping_only: true });
    t.equal((await ping()).status, 200);
    t.equal((await ping()).status, 200, 'from the cache');
    t.equal((await as(gwA, iago.email, iago.api_key).delete(`/users/${owner.user_id}`)).status, 200);
    const after = await ping();
    t.equal(after.status, 401);
    t.match(after.body, { result: 'error', code: 'USER_DEACTIVATED' });
  });
});

t.test('thirty parallel wrong passwords get five checks against a lockout of five', async (t) => {
  const sys = await startSystem(t);
  const { hamlet } = sys.people;
  const answers = await Promise.all(
    Array.from({ length: 30 }, () => sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: 'wrong' })),
  );
  const statuses = answers.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 401).length, 5, 'five wrong passwords checked');
  t.equal(statuses.filter((s) => s === 429).length, 25, 'the rest refused unchecked');
  const refused = answers.find((r) => r.status === 429);
  t.match(refused?.body, { result: 'error', code: 'RATE_LIMIT_HIT', msg: "You're making too many attempts to sign in. Try again later." });
  const right = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password });
  t.equal(right.status, 429, 'locked out: even the right password waits');
});

t.test('failed authentications are throttled per client address', async (t) => {
  const sys = await startSystem(t, { gateway: { authFailuresPerIpPerMinute: 3 } });
  const { hamlet, othello } = sys.people;
  // A key in the cache before the failures keeps working: its holder has proven it.
  t.equal((await sys.client(othello).get('/users/me')).status, 200);
  const wrongKey = new ApiClient(sys.baseUrl, { email: hamlet.email, apiKey: 'x'.repeat(32) });
  for (let i = 0; i < 3; i++) {
    const r = await wrongKey.get('/users/me');
    t.equal(r.status, 401, `failure ${i + 1} is checked`);
    t.equal(r.body.code, 'INVALID_API_KEY');
  }
  const throttled = await wrongKey.get('/users/me');
  t.equal(throttled.status, 429);
  t.match(throttled.body, { result: 'error', code: 'RATE_LIMIT_HIT', msg: 'API usage exceeded rate limit' });
  const retry = Number(throttled.headers.get('retry-after'));
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  const malformed = await sys.anonymous().call('GET', '/users/me', {}, { headers: { authorization: 'Basic !!!' } });
  t.equal(malformed.status, 429, 'a malformed header from the address is refused too');
  const fresh = await sys.client(hamlet).get('/users/me');
  t.equal(fresh.status, 429, 'an unchecked key from the address waits too (its check would be a guess)');
  t.equal((await sys.client(othello).get('/users/me')).status, 200, 'a cached key is not a guess');
});

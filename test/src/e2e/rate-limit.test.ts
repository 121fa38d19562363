/**
 * Rate limits (api-notes / operations.md §3.3): X-RateLimit-* on every response, 429
 * RATE_LIMIT_HIT with a Retry-After header and body field when exceeded, one budget per user
 * across every gateway replica (it lives in Redis), and none at all when set to 0.
 */
import t from 'tap';
import { startSystem } from '../harness.js';


t.test('per-user limit shared by two gateway replicas', async (t) => {
  const sys = await startSystem(t, { replicas: { gateway: 2 }, gateway: { rateLimitPerMinute: 10, rateLimitPerIpPerMinute: 3 } });
  const [gwA, gwB] = sys.gatewayUrls as [string, string];
  const { hamlet, othello } = sys.people;

  t.test('headers count down on every response, alternating replicas', async (t) => {
    for (let i = 1; i <= 10; i++) {
      const r = await sys.client(hamlet, { baseUrl: i % 2 ? gwA : gwB }).get('/users/me');
      t.equal(r.status, 200, `request ${i}`);
      t.equal(r.headers.get('x-ratelimit-limit'), '10');
      t.equal(r.headers.get('x-ratelimit-remaining'), String(10 - i), `remaining after ${i}`);
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      const now = Date.now() / 1000;
      t.ok(reset > now && reset <= now + 61, `reset ${reset} is when the rolling minute is empty again (epoch seconds)`);
    }
  });

  t.test('the next request on either replica is refused with 429', async (t) => {
    for (const url of [gwA, gwB]) {
      const r = await sys.client(hamlet, { baseUrl: url }).get('/users');
      t.equal(r.status, 429);
      t.match(r.body, { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' });
      t.same(Object.keys(r.body).sort(), ['code', 'msg', 'result', 'retry-after']);
      const bodyRetry = r.body['retry-after'] as unknown as number;
      t.ok(bodyRetry > 0 && bodyRetry <= 60, `retry-after field ${bodyRetry} s`);
      const header = Number(r.headers.get('retry-after'));
      t.ok(Number.isInteger(header) && header >= 1 && header <= 60, `Retry-After header ${header}`);
      t.ok(header >= bodyRetry, 'the header rounds up, so a client honouring it is not refused again');
      t.equal(r.headers.get('x-ratelimit-remaining'), '0');
      t.equal(r.headers.get('x-ratelimit-limit'), '10');
    }
  });

  t.test('another user has a budget of their own', async (t) => {
    const r = await sys.client(othello, { baseUrl: gwB }).get('/users/me');
    t.equal(r.status, 200);
    t.equal(r.headers.get('x-ratelimit-remaining'), '9');
  });

  t.test('long polls count like any request, with the headers, and are refused past the limit', async (t) => {
    // After /register the key is cached, so these plain polls are the gateway's fast lane (lib/fast-lane.ts).
    const { desdemona } = sys.people;
    const registered = await sys.client(desdemona, { baseUrl: gwA }).post('/register', { event_types: JSON.stringify(['message']) });
    t.equal(registered.status, 200);
    t.equal(registered.headers.get('x-ratelimit-remaining'), '9');
    const queueId = registered.body.queue_id as string;
    for (let i = 2; i <= 10; i++) {
      const r = await sys.client(desdemona, { baseUrl: i % 2 ? gwA : gwB }).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
      t.equal(r.status, 200, `poll ${i}`);
      t.equal(r.headers.get('x-ratelimit-limit'), '10');
      t.equal(r.headers.get('x-ratelimit-remaining'), String(10 - i), `remaining after ${i}`);
    }
    const refused = await sys.client(desdemona, { baseUrl: gwB }).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    t.equal(refused.status, 429);
    t.match(refused.body, { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' });
    t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After header');
    t.equal(refused.headers.get('x-ratelimit-remaining'), '0');
  });

  t.test('presence pings and fetches count like any request, with the headers, and are refused past the limit', async (t) => {
    // Once the key is cached, these plain forms are the gateway's fast lane (lib/fast-lane.ts).
    const { polonius } = sys.people;
    const forms = [{ status: 'active', ping_only: 'true' }, { status: 'active', slim_presence: 'true' }, { status: 'idle' }];
    for (let i = 1; i <= 10; i++) {
      const r = await sys.client(polonius, { baseUrl: i % 2 ? gwA : gwB }).post('/users/me/presence', forms[i % forms.length]);
      t.equal(r.status, 200, `ping ${i}`);
      t.equal(r.headers.get('x-ratelimit-limit'), '10');
      t.equal(r.headers.get('x-ratelimit-remaining'), String(10 - i), `remaining after ${i}`);
    }
    for (const form of forms) {
      const refused = await sys.client(polonius, { baseUrl: gwA }).post('/users/me/presence', form);
      t.equal(refused.status, 429);
      t.same(Object.keys(refused.body).sort(), ['code', 'msg', 'result', 'retry-after']);
      t.match(refused.body, { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT' });
      t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After header');
      t.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    }
  });

  t.test('unauthenticated requests are limited per client address', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await sys.anonymous({ baseUrl: i % 2 ? gwA : gwB }).get('/server_settings');
      statuses.push(r.status);
      if (i === 0) t.equal(r.headers.get('x-ratelimit-limit'), '3');
      if (r.status === 429) {
        t.match(r.body, { result: 'error', code: 'RATE_LIMIT_HIT' });
        t.ok(Number(r.headers.get('retry-after')) >= 1);
      }
    }
    t.same(statuses, [200, 200, 200, 429]);
  });
});

t.test('a limit of 0 switches rate limiting off', async (t) => {
  const sys = await startSystem(t, { gateway: { rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0 } });
  const statuses = new Set<number>();
  for (let i = 0; i < 30; i++) {
    const r = await sys.client(sys.people.hamlet).get('/users/me');
    statuses.add(r.status);
    if (i === 0) t.equal(r.headers.get('x-ratelimit-limit'), null, 'no rate-limit headers');
  }
  for (let i = 0; i < 10; i++) statuses.add((await sys.anonymous().get('/server_settings')).status);
  t.same([...statuses], [200], '40 requests, none refused');
});

/**
 * The fast lane in front of Fastify, over real HTTP: which requests it takes, and that every
 * other one (and every one a route gives back) reaches the handler behind it untouched.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { AppError } from '@zc/shared/errors';
import { createLogger } from '@zc/shared/logging';
import { DECLINE, FastLane, type LaneCredentials } from '../../src/lib/fast-lane.js';

const actor = { realm_id: 1, user_id: 7, role: 400, email: 'hamlet@zulip.test', full_name: 'Hamlet', is_bot: false } as unknown as LaneCredentials['actor'];
const credentials: LaneCredentials = { actor, keys: ['k:user:7', 'k:realm:1'], tokens: ['u', 'r'] };

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

async function startLane(t: { teardown(fn: () => unknown): void }, exactClientIp = true) {
  const lane = new FastLane(createLogger({ service: 'test', level: 'silent' }), exactClientIp);
  lane.authenticate = (_host, authorization) => (authorization === 'Basic good' ? credentials : undefined);
  const observed: Array<{ route: string; status: number }> = [];
  lane.observe = (r) => observed.push({ route: r.route, status: r.status });
  const seen: Array<Record<string, string>> = [];
  lane.add('GET', '/api/v1/thing', ['a', 'b'], async ({ params: query, credentials: c }) => {
    seen.push({ ...query });
    if (c !== credentials) throw new Error('credentials not passed on');
    switch (query.a) {
      case 'decline':
        return DECLINE;
      case 'refuse':
        throw new AppError('BAD_EVENT_QUEUE_ID', 'Bad event queue ID: x', 400, { queue_id: 'x' });
      case 'unauthorized':
        throw new AppError(null, 'Not logged in', 401);
      case 'crash':
        throw new Error('secret detail');
      default:
        return { body: `{"result":"success","msg":"","a":${JSON.stringify(query.a ?? null)}}`, headers: { 'x-extra': 'yes' } };
    }
  });
  lane.add('POST', '/api/v1/form', ['a', 'b'], async ({ params, credentials: c }) => {
    seen.push({ ...params });
    if (c !== credentials) throw new Error('credentials not passed on');
    if (params.a === 'decline') return DECLINE;
    return { body: `{"result":"success","msg":"","a":${JSON.stringify(params.a ?? null)}}` };
  });
  let behind = 0;
  const server = createServer(
    lane.listener((req, res) => {
      behind++;
      // What Fastify's parser reads (the route's preParsing hook): the body as the client sent it.
      const payload = lane.payload(req, req);
      let body = '';
      payload.setEncoding('utf8');
      payload.on('data', (c: string) => (body += c));
      payload.on('end', () => res.writeHead(299, { 'content-type': 'text/plain' }).end(`fastify ${req.method} ${req.url}${body ? ` ${body}` : ''}`));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const send = (path: string, o: { method?: string; authorization?: string | null; body?: string; type?: string; chunked?: boolean } = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const headers: Record<string, string> = {};
      if (o.authorization !== null) headers.authorization = o.authorization ?? 'Basic good';
      if (o.body !== undefined) {
        headers['content-type'] = o.type ?? 'application/x-www-form-urlencoded';
        if (o.chunked) headers['transfer-encoding'] = 'chunked';
        else headers['content-length'] = String(Buffer.byteLength(o.body));
      }
      const req = httpRequest({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end(o.body);
    });
  return { lane, send, seen, observed, behind: () => behind };
}

t.test('takes the plain form of its routes', async (t) => {
  const s = await startLane(t);
  const r = await s.send('/api/v1/thing?a=1-2_3.x:y&b=');
  t.equal(r.status, 200);
  t.same(JSON.parse(r.body), { result: 'success', msg: '', a: '1-2_3.x:y' });
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(r.headers['cache-control'], 'private, no-store');
  t.equal(r.headers['x-extra'], 'yes');
  t.equal(Number(r.headers['content-length']), Buffer.byteLength(r.body));
  t.same(s.seen, [{ a: '1-2_3.x:y', b: '' }]);
  t.equal((await s.send('/api/v1/thing/?a=2')).status, 200, 'a trailing slash, as Fastify ignores it');
  t.equal((await s.send('/api/v1/thing')).status, 200, 'no query string');
  t.equal(s.behind(), 0);
  t.same(s.observed, [
    { route: '/api/v1/thing', status: 200 },
    { route: '/api/v1/thing', status: 200 },
    { route: '/api/v1/thing', status: 200 },
  ]);
});

t.test('everything else goes to the handler behind it, untouched', async (t) => {
  const s = await startLane(t);
  const cases: Array<[string, Parameters<typeof s.send>[1]]> = [
    ['/api/v1/thing?a=1&c=2', {}], // a name the route does not take: Fastify reports it as ignored
    ['/api/v1/thing?a=1&a=2', {}], // a name given twice
    ['/api/v1/thing?a=%41', {}], // escapes: parsed by Fastify alone
    ['/api/v1/thing?a=x+y', {}],
    ['/api/v1/thing?a=%C3%A9', {}],
    ['/api/v1/thing?a=1', { authorization: null }], // no credentials: Fastify's 401
    ['/api/v1/thing?a=1', { authorization: 'Basic other' }], // a key the cache does not hold
    ['/api/v1/thing?a=1', { method: 'POST' }],
    ['/api/v1/thing?a=1', { method: 'GET', body: 'b=2' }], // a body: its parameters count
    ['/api/v1/other?a=1', {}],
    ['/api/v1/thing?a=decline', {}], // the route gave it back
  ];
  for (const [path, o] of cases) {
    const r = await s.send(path, o);
    t.equal(r.status, 299, `${o?.method ?? 'GET'} ${path}`);
    t.equal(r.body, `fastify ${o?.method ?? 'GET'} ${path}${o?.body ? ` ${o.body}` : ''}`, 'the request as it came');
  }
  t.equal(s.behind(), cases.length);
  t.same(s.seen, [{ a: 'decline' }], 'only the declining request reached the route');
  t.same(s.observed, [], 'what Fastify answers, Fastify logs');
});

t.test('takes the plain form body of its POST routes, and hands every other POST on with its body as sent', async (t) => {
  const s = await startLane(t);
  for (const type of ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8']) {
    const r = await s.send('/api/v1/form', { method: 'POST', body: 'a=1-2_3&b=', type });
    t.equal(r.status, 200, type);
    t.same(JSON.parse(r.body), { result: 'success', msg: '', a: '1-2_3' });
    t.equal(r.headers['cache-control'], 'private, no-store');
  }
  t.equal((await s.send('/api/v1/form/', { method: 'POST', body: 'a=2' })).status, 200, 'a trailing slash');
  t.same(s.seen, [{ a: '1-2_3', b: '' }, { a: '1-2_3', b: '' }, { a: '2' }]);
  t.equal(s.behind(), 0);
  s.seen.length = 0;
  const long = `a=${'x'.repeat(1100)}`;
  const cases: Array<[string, Parameters<typeof s.send>[1]]> = [
    ['/api/v1/form', { method: 'POST', body: 'a=1&c=2' }], // read, then handed on: a name the route does not take
    ['/api/v1/form', { method: 'POST', body: 'a=1&a=2' }],
    ['/api/v1/form', { method: 'POST', body: 'a=x+y' }],
    ['/api/v1/form', { method: 'POST', body: 'a=%C3%A9' }],
    ['/api/v1/form', { method: 'POST', body: 'a=decline' }], // the route gave it back after reading it
    ['/api/v1/form', { method: 'POST', body: long }], // too long to read here
    ['/api/v1/form', { method: 'POST', body: '{"a":"1"}', type: 'application/json' }],
    ['/api/v1/form', { method: 'POST', body: 'a=1', chunked: true }],
    ['/api/v1/form', { method: 'POST', body: 'a=1', authorization: 'Basic other' }],
    ['/api/v1/form?b=1', { method: 'POST', body: 'a=1' }], // parameters in the query string too
    ['/api/v1/form', { method: 'GET' }],
  ];
  for (const [path, o] of cases) {
    const r = await s.send(path, o);
    t.equal(r.status, 299, `${o?.method} ${path} ${o?.body?.slice(0, 20) ?? ''}`);
    t.equal(r.body, `fastify ${o?.method} ${path}${o?.body ? ` ${o.body}` : ''}`, 'the request and its body as they came');
  }
  t.equal(s.behind(), cases.length);
  t.same(s.seen, [{ a: 'decline' }], 'only the declining request reached the route');
  t.same(s.observed.length, 3, 'what Fastify answers, Fastify logs');
});

t.test('a route refusal is answered in the error envelope', async (t) => {
  const s = await startLane(t);
  const refused = await s.send('/api/v1/thing?a=refuse');
  t.equal(refused.status, 400);
  t.same(JSON.parse(refused.body), { result: 'error', msg: 'Bad event queue ID: x', code: 'BAD_EVENT_QUEUE_ID', queue_id: 'x' });
  t.equal(refused.headers['cache-control'], 'private, no-store');
  const unauthorized = await s.send('/api/v1/thing?a=unauthorized');
  t.equal(unauthorized.status, 401);
  t.equal(unauthorized.headers['www-authenticate'], 'Basic realm="zulip"');
  t.same(JSON.parse(unauthorized.body), { result: 'error', msg: 'Not logged in' });
  const crashed = await s.send('/api/v1/thing?a=crash');
  t.equal(crashed.status, 500);
  t.same(JSON.parse(crashed.body), { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' }, 'no detail of the failure');
  t.same(s.observed.map((o) => o.status), [400, 401, 500]);
  t.equal(s.behind(), 0);
});

t.test('stands aside while closing, and when it cannot know the client address', async (t) => {
  const s = await startLane(t);
  s.lane.closing = true;
  t.equal((await s.send('/api/v1/thing?a=1')).status, 299);
  const proxied = await startLane(t, false);
  t.equal((await proxied.send('/api/v1/thing?a=1')).status, 299);
  t.same([...s.seen, ...proxied.seen], []);
});

t.test('with an admission check (per-user rate limits on): its headers on every answer, its refusal instead of the route, its decline to the handler behind', async (t) => {
  const s = await startLane(t);
  let verdict: 'admit' | 'refuse' | 'decline' = 'admit';
  s.lane.admit = async (c) => {
    if (c !== credentials) throw new Error('credentials not passed on');
    if (verdict === 'decline') return DECLINE;
    const headers = { 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': verdict === 'admit' ? '150' : '0', 'x-ratelimit-reset': '1700000000' };
    return verdict === 'admit' ? { headers } : { headers, refusal: new AppError('RATE_LIMIT_HIT', 'API usage exceeded rate limit', 429, { 'retry-after': 2.5 }) };
  };
  const admitted = await s.send('/api/v1/thing?a=1');
  t.equal(admitted.status, 200);
  t.match(admitted.headers, { 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '150', 'x-ratelimit-reset': '1700000000', 'x-extra': 'yes' }, "the check's and the route's headers");
  const refusedByRoute = await s.send('/api/v1/thing?a=refuse');
  t.equal(refusedByRoute.status, 400);
  t.equal(refusedByRoute.headers['x-ratelimit-remaining'], '150', "a route's refusal carries them too");

  verdict = 'refuse';
  const before = s.seen.length;
  const refused = await s.send('/api/v1/thing?a=1');
  t.equal(refused.status, 429);
  t.same(JSON.parse(refused.body), { result: 'error', msg: 'API usage exceeded rate limit', code: 'RATE_LIMIT_HIT', 'retry-after': 2.5 });
  t.match(refused.headers, { 'retry-after': '3', 'x-ratelimit-remaining': '0' });
  t.equal(s.seen.length, before, 'the route never ran');

  verdict = 'decline';
  const behind = s.behind();
  const declined = await s.send('/api/v1/thing?a=1');
  t.equal(declined.status, 299, 'the handler behind answers');
  t.equal(s.behind(), behind + 1);
  t.equal(s.seen.length, before, 'the route never ran');
  t.same(s.observed.at(-1), { route: '/api/v1/thing', status: 429 }, 'a declined request is not observed by the lane');
});

/**
 * Zulip's request parameters through the gateway, sent every way real clients send them:
 * the query string on any method, urlencoded bodies (python-zulip-api, with JSON text in
 * form fields), multipart bodies (zulip-js), JSON bodies; and the bodies attackers and
 * broken clients send (operations.md faults 22–27), which must never produce a 500.
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { request } from 'undici';
import { buildApp } from '@zc/gateway/app';
import { Bus } from '@zc/shared/bus';
import { loadConfig } from '@zc/shared/config';
import { success } from '@zc/shared/envelope';
import { createLogger } from '@zc/shared/logging';
import { bool, int, json, oneOf, str } from '@zc/shared/params';
import { createRedis } from '@zc/shared/redis';
// The gateway's own params() (not exported by the package): the echo route must parse exactly as real routes do.
import { params } from '../../../services/gateway/dist/plugins/params.js';
import type { Params } from '../client.js';
import { startSystem, type Account, type System } from '../harness.js';

const ECHO_PATH = '/api/v1/zc-test/echo';

/**
 * The real gateway app (every plugin, auth against this system's users service) plus one
 * route that echoes its parsed parameters on GET, POST, PATCH and DELETE, since the
 * foundation has no PATCH or DELETE endpoint yet.
 */
async function echoGateway(t: { teardown(fn: () => unknown): void }, sys: System): Promise<string> {
  const config = loadConfig(sys.env.config);
  const log = createLogger({ service: 'test', level: 'silent' });
  const bus = await Bus.connect({ url: config.natsUrl, prefix: config.subjectPrefix, name: 'params-echo', log });
  const redis = createRedis(config.redisUrl);
  const app = await buildApp({
    bus,
    redis,
    config,
    log,
    gateway: { port: 0, host: '127.0.0.1', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, authFailuresPerIpPerMinute: 0, authCacheTtlMs: 30_000, maxConcurrentPerUser: 0, trustProxy: false, accessLog: false, heartbeatMs: () => 50_000 },
  });
  const specs = {
    n: int(),
    flag: bool(),
    ids: json(Type.Array(Type.Integer())),
    name: str(),
    anchor: oneOf(['newest', 'oldest'] as const).optional('newest'),
  };
  app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE'], url: ECHO_PATH, handler: async (req) => success(params(req, specs)) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(async () => {
    await app.close();
    await bus.close();
    redis.disconnect();
  });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

const basic = (a: Account) => `Basic ${Buffer.from(`${a.email}:${a.api_key}`).toString('base64')}`;

/** A raw request, for bodies the ApiClient would never build. */
async function raw(url: string, o: { method?: string; headers?: Record<string, string>; body?: string | Buffer }) {
  const res = await request(url, { method: (o.method ?? 'POST') as 'POST', headers: o.headers, body: o.body });
  const text = await res.body.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { unparsed: text };
  }
  return { status: res.statusCode, body, headers: res.headers };
}

t.test('parameters through the gateway', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'gateway'] });
  const { iago, hamlet } = sys.people;
  const echoUrl = await echoGateway(t, sys);
  const echo = sys.client(hamlet, { baseUrl: echoUrl });
  const sent = { n: 5, flag: true, ids: [1, 2], name: 'Ophelia [x] {"a":1}' };
  const expected = { result: 'success', msg: '', n: 5, flag: true, ids: [1, 2], name: 'Ophelia [x] {"a":1}', anchor: 'newest' };

  t.test('the same request, every method and encoding', async (t) => {
    const ways = [
      ['GET', 'query'],
      ['POST', 'query'],
      ['POST', 'form'],
      ['POST', 'multipart'],
      ['POST', 'json'],
      ['PATCH', 'query'],
      ['PATCH', 'form'],
      ['PATCH', 'multipart'],
      ['DELETE', 'query'],
      ['DELETE', 'form'],
    ] as const;
    for (const [method, encoding] of ways) {
      const r = await echo.call(method, '/zc-test/echo', sent, { encoding });
      t.equal(r.status, 200, `${method} ${encoding}`);
      t.same(r.body, expected, `${method} ${encoding} decodes the same values`);
    }
  });

  t.test('python-zulip-api style: JSON text with spaces, booleans as JSON', async (t) => {
    const body = 'n=5&flag=true&ids=%5B1%2C%202%5D&name=Ophelia&anchor=oldest';
    const r = await raw(`${echoUrl}${ECHO_PATH}`, { method: 'PATCH', headers: { authorization: basic(hamlet), 'content-type': 'application/x-www-form-urlencoded' }, body });
    t.same(r.body, { ...expected, name: 'Ophelia', anchor: 'oldest' });
    const pyBool = await echo.post('/zc-test/echo', { ...sent, flag: 'True' });
    t.equal(pyBool.status, 400, "Python's str(True) is not JSON");
    t.match(pyBool.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Argument "flag" is not valid JSON.' });
  });

  t.test('query and body together: the body wins; a repeated key keeps the last value', async (t) => {
    const r = await raw(`${echoUrl}${ECHO_PATH}?n=1&name=fromquery`, {
      headers: { authorization: basic(hamlet), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'n=7&n=8&flag=false&ids=[]',
    });
    t.same(r.body, { ...expected, n: 8, flag: false, ids: [], name: 'fromquery' });
  });

  t.test('decoding errors name the parameter', async (t) => {
    const cases: Array<[Params, Record<string, unknown>]> = [
      [{ ...sent, n: '9007199254740993' }, { code: 'BAD_REQUEST', msg: 'n is not an integer', var_name: 'n' }],
      [{ ...sent, n: 'NaN' }, { code: 'BAD_REQUEST', msg: 'n is not an integer' }],
      [{ ...sent, ids: '[1,' }, { code: 'BAD_REQUEST', msg: 'Argument "ids" is not valid JSON.', var_name: 'ids' }],
      [{ ...sent, ids: '[9007199254740993]' }, { code: 'BAD_REQUEST', msg: 'Invalid ids: integer out of range' }],
      [{ ...sent, ids: '["a"]' }, { code: 'BAD_REQUEST', msg: /^Invalid ids\[0\]/ }],
      [{ ...sent, anchor: 'middle' }, { code: 'BAD_REQUEST', msg: 'Invalid anchor' }],
      [{ flag: true, ids: [], name: 'x' }, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'n' argument", var_name: 'n' }],
    ];
    for (const [p, want] of cases) {
      const r = await echo.post('/zc-test/echo', p);
      t.equal(r.status, 400);
      t.match(r.body, { result: 'error', ...want }, JSON.stringify(p));
    }
  });

  t.test('real endpoints: GET /users and GET /users/{id} with query parameters', async (t) => {
    const list = await sys.client(hamlet).get('/users', { client_gravatar: false, include_custom_profile_fields: true });
    t.equal(list.status, 200);
    const members = list.body.members as Array<Record<string, unknown>>;
    t.ok(members.every((m) => typeof m.avatar_url === 'string'), 'client_gravatar=false gives every avatar URL');
    t.notOk('ignored_parameters_unsupported' in list.body, 'nothing ignored, nothing reported');
    const one = await sys.client(hamlet).get(`/users/${iago.user_id}`, { client_gravatar: false, include_custom_profile_fields: true });
    t.match(one.body, { result: 'success', user: { user_id: iago.user_id, avatar_url: /^https:/, profile_data: {} } });
    const pyStyle = await sys.client(hamlet).get('/users', { client_gravatar: 'False' });
    t.equal(pyStyle.status, 400);
    t.match(pyStyle.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Argument "client_gravatar" is not valid JSON.' });
  });

  t.test('real endpoints: POST /users and POST /fetch_api_key, every encoding', async (t) => {
    for (const encoding of ['form', 'multipart', 'query', 'json'] as const) {
      const email = `new-${encoding}@zulip.test`;
      const created = await sys.client(iago).post('/users', { email, password: `pw-${encoding}-123`, full_name: `New ${encoding}` }, { encoding });
      t.equal(created.status, 200, `POST /users as ${encoding}`);
      t.type(created.body.user_id, 'number');
      const key = await sys.anonymous().post('/fetch_api_key', { username: email, password: `pw-${encoding}-123` }, { encoding });
      t.equal(key.status, 200, `POST /fetch_api_key as ${encoding}`);
      t.match(key.body, { result: 'success', email, user_id: created.body.user_id, api_key: /^[A-Za-z0-9]{32}$/ });
    }
    const missing = await sys.anonymous().post('/fetch_api_key', { password: 'x' }, { encoding: 'multipart' });
    t.same(missing.body, { result: 'error', msg: "Missing 'username' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'username' });
  });

  t.test('ignored_parameters_unsupported lists unknown names on success only', async (t) => {
    const r = await sys.client(hamlet).get('/users', { foo: 1, bar: 'x' });
    t.equal(r.status, 200);
    t.same(r.body.ignored_parameters_unsupported, ['foo', 'bar']);
    const login = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password, otp: '123' });
    t.same(login.body.ignored_parameters_unsupported, ['otp']);
    const failed = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: 'wrong', otp: '123' });
    t.equal(failed.status, 401);
    t.notOk('ignored_parameters_unsupported' in failed.body, 'not on errors');
  });

  t.test('malformed bodies are 4xx in the envelope', async (t) => {
    const url = `${sys.baseUrl}/api/v1/fetch_api_key`;
    const cases: Array<[string, Record<string, string>, string | Buffer, number]> = [
      ['truncated JSON', { 'content-type': 'application/json' }, '{"username":', 400],
      ['multipart without its boundary', { 'content-type': 'multipart/form-data; boundary=zz' }, 'garbage\r\n--yy--', 400],
      ['multipart with no boundary parameter', { 'content-type': 'multipart/form-data' }, '--zz\r\n', 400],
      ['multipart cut short', { 'content-type': 'multipart/form-data; boundary=zz' }, '--zz\r\nContent-Disposition: form-data; name="username"\r\n\r\nabc', 400],
      ['XML', { 'content-type': 'application/xml' }, '<username>a</username>', 415],
      ['an unknown content type', { 'content-type': 'application/x-zulip' }, 'username=a', 415],
    ];
    for (const [what, headers, body, status] of cases) {
      const r = await raw(url, { headers, body });
      t.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status}`);
      t.equal(r.body.result, 'error', `${what}: error envelope`);
      t.type(r.body.msg, 'string');
      t.notMatch(JSON.stringify(r.body), /at .*\.js:\d+|node_modules/, `${what}: no stack trace`);
      if (status === 415) t.same(r.body, { result: 'error', msg: 'Unsupported content type', code: 'BAD_REQUEST' }, what);
      else t.match(r.body, { code: 'BAD_REQUEST' }, what);
      t.equal(r.status, status, `${what}: status`);
    }
    // Bodies that parse but carry no usable fields: Django would see an empty form, so would we.
    for (const [what, headers, body] of [
      ['JSON that is not an object', { 'content-type': 'application/json' }, '"username"'],
      ['text/plain', { 'content-type': 'text/plain' }, 'username=a&password=b'],
      ['bad percent-encoding', { 'content-type': 'application/x-www-form-urlencoded' }, 'password=%E0%A4%A&x=%'],
    ] as const) {
      const r = await raw(url, { headers, body });
      t.equal(r.status, 400, what);
      t.same(r.body, { result: 'error', msg: "Missing 'username' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'username' }, what);
    }
  });

  t.test('bodies over 1 MiB are refused with 413', async (t) => {
    const big = `username=${'a'.repeat(1024 * 1024 + 10)}&password=x`;
    const form = await raw(`${sys.baseUrl}/api/v1/fetch_api_key`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: big });
    t.equal(form.status, 413);
    t.same(form.body, { result: 'error', msg: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' });
    const jsonBody = await raw(`${sys.baseUrl}/api/v1/users`, {
      headers: { authorization: basic(iago), 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'big@zulip.test', password: 'x'.repeat(2 * 1024 * 1024), full_name: 'Big' }),
    });
    t.equal(jsonBody.status, 413);
    t.match(jsonBody.body, { result: 'error', code: 'PAYLOAD_TOO_LARGE' });
    const boundary = 'zcboundary';
    const multipart = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\n${'a'.repeat(2 * 1024 * 1024)}\r\n--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\nx\r\n--${boundary}--\r\n`,
    );
    const mp = await raw(`${sys.baseUrl}/api/v1/fetch_api_key`, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: multipart });
    t.equal(mp.status, 413, 'a 2 MiB multipart field');
    t.match(mp.body, { result: 'error', code: 'PAYLOAD_TOO_LARGE' });
    // Under every body limit, but twice as long once JSON-escaped for the bus: over NATS's max_payload.
    const quotes = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\n${'"'.repeat(700_000)}\r\n--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\nx\r\n--${boundary}--\r\n`,
    );
    const escaped = await raw(`${sys.baseUrl}/api/v1/fetch_api_key`, { headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body: quotes });
    t.equal(escaped.status, 413, 'a request too large for the bus is the client\'s 413, not a 503');
    t.same(escaped.body, { result: 'error', msg: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' });
  });

  t.test('prototype-polluting keys never reach a 500 or Object.prototype', async (t) => {
    const url = `${sys.baseUrl}/api/v1/fetch_api_key`;
    const login = `username=${encodeURIComponent(hamlet.email)}&password=${encodeURIComponent(hamlet.password)}`;
    const form = await raw(url, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `${login}&__proto__=x&__proto__[polluted]=1&constructor[prototype][polluted]=1&constructor=y`,
    });
    t.equal(form.status, 200, 'form keys are just unknown names');
    t.same((form.body.ignored_parameters_unsupported as string[]).sort(), ['__proto__', '__proto__[polluted]', 'constructor', 'constructor[prototype][polluted]']);
    const query = await raw(`${url}?__proto__[polluted]=1&constructor.prototype.polluted=1&__proto__=z`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: login,
    });
    t.equal(query.status, 200, 'query keys too');
    const protoJson = await raw(url, {
      headers: { 'content-type': 'application/json' },
      body: `{"username":${JSON.stringify(hamlet.email)},"password":${JSON.stringify(hamlet.password)},"__proto__":{"polluted":1}}`,
    });
    t.equal(protoJson.status, 400, 'JSON with __proto__ is refused');
    t.match(protoJson.body, { result: 'error', code: 'BAD_REQUEST' });
    const ctorJson = await raw(url, {
      headers: { 'content-type': 'application/json' },
      body: `{"username":"a","password":"b","constructor":{"prototype":{"polluted":1}}}`,
    });
    t.equal(ctorJson.status, 400, 'JSON with constructor.prototype is refused');
    const boundary = 'zcproto';
    const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const mp = await raw(url, {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `${part('username', hamlet.email)}${part('password', hamlet.password)}${part('__proto__', 'x')}${part('constructor', 'y')}--${boundary}--\r\n`,
    });
    t.ok(mp.status < 500, `multipart with __proto__ fields: ${mp.status}`);
    // Computed keys: a literal `__proto__:` would set the prototype instead of sending a field.
    const echoed = await echo.post('/zc-test/echo', { ...sent, ['__proto__']: 'x', ['constructor']: 'y', hasOwnProperty: 'z' }, { encoding: 'form' });
    t.equal(echoed.status, 200, 'the echo route decodes alongside them');
    t.equal((Object.prototype as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
    t.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

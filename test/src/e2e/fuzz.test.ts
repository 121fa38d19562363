/**
 * Property-based fuzzing of every gateway route (issue 13): requests generated from the routes'
 * own parameter declarations (shared params' shapes, JSON schemas included) mixed with hostile
 * values (NUL, lone surrogates, huge ids, deep JSON, long text), sent with every encoding
 * Zulip clients use. Properties: never a 5xx, always the envelope, an answer within a time
 * bound. `npm test` runs a fixed seed and a bounded count; `npm run test:fuzz` runs longer
 * (ZC_FUZZ_RUNS, ZC_FUZZ_SEED).
 */
import t from 'tap';
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { request } from 'undici';
import { declaredParams, declaredRoutes } from '@zc/gateway/app';
import type { Param } from '@zc/shared/params';
import { startSystem } from '../harness.js';

const RUNS = Number(process.env.ZC_FUZZ_RUNS ?? 200);
const SEED = Number(process.env.ZC_FUZZ_SEED ?? 1313);
const TIME_BOUND_MS = 10_000;

/** Routes that would end the fuzzing actor's own session rather than test anything. */
const SKIP = new Set(['POST /api/v1/users/me/api_key/regenerate', 'DELETE /api/v1/users/me']);

const HOSTILE = [
  '', '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\ud83d\ude00', '99999999999999999999', '9223372036854775808', '-1', '0', '1', '1.5',
  'null', 'true', '[]', '{}', '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]', `${'['.repeat(3000)}${']'.repeat(3000)}`, 'x'.repeat(70_000),
  'Denmark', 'hamlet@zulip.test', '"', "'; DROP TABLE users; --", '%00', '../../etc/passwd', 'javascript:alert(1)', '<script>', 'NaN', '1e400',
];
const hostile = fc.constantFrom(...HOSTILE);
const anyText = fc.oneof(hostile, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }));

/** Values a JSON schema accepts (roughly), so requests get past shape checks into the services. */
function fromSchema(s: TSchema, depth = 0): fc.Arbitrary<unknown> {
  const schema = s as TSchema & Record<string, unknown>;
  if (depth > 4) return fc.constant(null);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as TSchema[]).map((x) => fromSchema(x, depth + 1)));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  switch (schema.type) {
    case 'string': return fc.oneof(anyText, fc.constantFrom('stream', 'private', 'channel', 'topic', 'search', 'add', 'remove', 'read', 'starred'));
    case 'integer': return fc.oneof(fc.integer({ min: -2, max: 50 }), fc.integer(), fc.constant(2 ** 62));
    case 'number': return fc.double();
    case 'boolean': return fc.boolean();
    case 'null': return fc.constant(null);
    case 'array': return fc.array(fromSchema(schema.items as TSchema, depth + 1), { maxLength: 4 });
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, TSchema>;
      const required = (schema.required ?? []) as string[];
      return fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(v, depth + 1)])), { requiredKeys: required });
    }
    default: return fc.jsonValue({ maxDepth: 3 });
  }
}

/** A value for one declared parameter: often what it expects, sometimes anything at all. */
function valueFor(p: Param<unknown>): fc.Arbitrary<unknown> {
  const shape = p.shape ?? { kind: 'custom' };
  switch (shape.kind) {
    case 'int': return fc.oneof(fc.integer({ min: -2, max: 50 }), fc.integer(), hostile);
    case 'bool': return fc.oneof(fc.boolean(), hostile);
    case 'oneOf': return fc.oneof(fc.constantFrom(...shape.values), hostile);
    case 'json': return fc.oneof({ weight: 3, arbitrary: fromSchema(shape.schema) }, { weight: 1, arbitrary: hostile });
    default: return fc.oneof(anyText, fc.jsonValue({ maxDepth: 3 }));
  }
}

const pathValue = fc.oneof(fc.constantFrom('1', '2', '3', '4', '5', '10', '999999'), hostile.filter((v) => v !== ''));

/** Every byte percent-encoded (encodeURIComponent throws on a lone surrogate; UTF-8 replaces it). */
const percentEncode = (v: string) => [...Buffer.from(v)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

interface Case {
  method: string;
  url: string;
  encoding: 'query' | 'form' | 'json' | 'multipart';
  params: Record<string, unknown>;
}

function requestArb(route: string): fc.Arbitrary<Case> {
  const [method, pattern] = route.split(' ') as [string, string];
  const names = [...pattern.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? '*');
  const specs = declaredParams.get(route) ?? {};
  const declared = fc.record(Object.fromEntries(Object.entries(specs).map(([k, p]) => [k, valueFor(p)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), hostile.filter((v) => v.length < 100)), anyText, { maxKeys: 2 });
  return fc.record({
    path: fc.tuple(...names.map(() => pathValue)),
    declared,
    extra,
    encoding: fc.constantFrom<Case['encoding']>(...(method === 'GET' ? (['query'] as const) : (['query', 'form', 'json', 'multipart'] as const))),
  }).map(({ path, declared, extra, encoding }) => {
    let i = 0;
    const url = pattern.replace(/:(\w+)|\*/g, () => percentEncode(path[i++] as string));
    return { method, url, encoding, params: { ...extra, ...declared } };
  });
}

function encode(c: Case): { url: string; body?: string | FormData; headers: Record<string, string> } {
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');
  if (c.encoding === 'json') return { url: c.url, body: JSON.stringify(c.params), headers: { 'content-type': 'application/json' } };
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(c.params)) form.append(k, text(v));
  if (c.encoding === 'query') return { url: `${c.url}?${form}`, headers: {} };
  if (c.encoding === 'form') return { url: c.url, body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  const fd = new FormData();
  for (const [k, v] of form) fd.append(k, v);
  return { url: c.url, body: fd, headers: {} };
}

// A long run (npm run test:fuzz) takes as long as it takes; the default file timeout would end it.
t.setTimeout(120_000 + RUNS * 1_000);

t.test('every route: never a 5xx, always the envelope, in time', async (t) => {
  const sys = await startSystem(t);
  const { iago } = sys.people;
  const auth = `Basic ${Buffer.from(`${iago.email}:${iago.api_key}`).toString('base64')}`;
  const send = async (c: Case) => {
    const { url, body, headers } = encode(c);
    const started = Date.now();
    const res = await request(`${sys.baseUrl}${url}`, {
      method: c.method as 'GET',
      headers: { authorization: auth, ...headers },
      body,
      signal: AbortSignal.timeout(TIME_BOUND_MS + 5000),
    });
    const text = await res.body.text();
    return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text, ms: Date.now() - started };
  };

  const routes = [...declaredRoutes].filter((r) => !SKIP.has(r)).sort();
  t.ok(routes.length > 50, `${routes.length} routes`);
  // One plain call per route lets each record its parameter declarations.
  for (const r of routes) {
    const [method, pattern] = r.split(' ') as [string, string];
    await send({ method, url: pattern.replace(/:(\w+)|\*/g, '1'), encoding: method === 'GET' ? 'query' : 'form', params: {} });
  }
  t.ok(declaredParams.size > 40, `${declaredParams.size} routes declared their parameters`);

  const failures: string[] = [];
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...routes).chain(requestArb), async (c) => {
      const r = await send(c);
      const where = `${c.method} ${c.url.slice(0, 120)} (${c.encoding}) → ${r.status} in ${r.ms} ms: ${r.text.slice(0, 200)}`;
      if (r.status >= 500) failures.push(where);
      if (r.ms > TIME_BOUND_MS) failures.push(`slow: ${where}`);
      if (process.env.ZC_FUZZ_VERBOSE) console.error(where.slice(0, 300));
      if (r.type.includes('application/json') || r.status >= 400) {
        let body: { result?: unknown; msg?: unknown; code?: unknown } = {};
        try {
          body = JSON.parse(r.text);
        } catch {
          failures.push(`not JSON: ${where}`);
        }
        const envelope = (body.result === 'success' || body.result === 'error') && typeof body.msg === 'string';
        const coded = body.result !== 'error' || body.code === undefined || typeof body.code === 'string';
        if (!envelope || !coded) failures.push(`no envelope: ${where}`);
      }
      return true;
    }),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
  t.same(failures, [], `${RUNS} generated requests (seed ${SEED})`);
});

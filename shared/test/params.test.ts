/**
 * Zulip's parameter decoding (shared/src/params), table-driven: every value as real clients
 * send it (bare text, JSON text, or an already decoded JSON body value).
 */
import t from 'tap';
import { Type } from '@sinclair/typebox';
import { AppError } from '../src/errors/index.js';
import { bool, custom, decodeJsonField, int, json, oneOf, parseParams, str, type Param } from '../src/params/index.js';

/** The error a decode throws, as the client would see its fields. */
function failure(fn: () => unknown): { code: string | null; msg: string; status: number; data: Record<string, unknown> } | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (!(e instanceof AppError)) throw e;
    return { code: e.code, msg: e.message, status: e.httpStatus, data: { ...e.data } };
  }
}

const decodeOne = <T>(spec: Param<T>, raw: unknown) => parseParams({ x: raw }, { x: spec }).values.x;

t.test('int accepts bare and JSON integers, refuses everything else', async (t) => {
  const ok: Array<[unknown, number]> = [
    ['5', 5],
    ['-7', -7],
    [' 42 ', 42],
    ['0', 0],
    [12, 12],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['-9007199254740991', Number.MIN_SAFE_INTEGER],
  ];
  for (const [raw, want] of ok) t.equal(decodeOne(int(), raw), want, `${JSON.stringify(raw)} → ${want}`);

  const bad: unknown[] = [
    '9007199254740993', // beyond 2^53: would silently round to ...992
    '99999999999999999999999',
    '1e3',
    '1.5',
    1.5,
    'NaN',
    Number.NaN,
    'Infinity',
    Number.POSITIVE_INFINITY,
    '',
    'abc',
    '0x10',
    'true',
    true,
    '[1]',
    [1],
    null,
    '"5"',
  ];
  for (const raw of bad) {
    t.same(failure(() => decodeOne(int(), raw)), { code: 'BAD_REQUEST', msg: 'x is not an integer', status: 400, data: { var_name: 'x' } }, `${String(JSON.stringify(raw))} is refused`);
  }
});

t.test('int bounds', async (t) => {
  t.equal(decodeOne(int({ min: 1, max: 10 }), '10'), 10);
  t.equal(decodeOne(int({ min: 1, max: 10 }), '1'), 1);
  t.match(failure(() => decodeOne(int({ min: 1 }), '0')), { code: 'BAD_REQUEST', msg: 'x is too small', data: { var_name: 'x' } });
  t.match(failure(() => decodeOne(int({ max: 10 }), '11')), { code: 'BAD_REQUEST', msg: 'x is too large', data: { var_name: 'x' } });
});

t.test('bool takes JSON booleans only', async (t) => {
  t.equal(decodeOne(bool(), 'true'), true);
  t.equal(decodeOne(bool(), 'false'), false);
  t.equal(decodeOne(bool(), true), true, 'a JSON body value');
  for (const raw of ['1', '0', '"true"', 'null', 1, null]) {
    t.match(failure(() => decodeOne(bool(), raw)), { code: 'BAD_REQUEST', msg: 'x is not a boolean', status: 400 }, `${JSON.stringify(raw)} is refused`);
  }
  for (const raw of ['True', 'yes', '']) {
    t.same(failure(() => decodeOne(bool(), raw)), { code: 'BAD_REQUEST', msg: 'Argument "x" is not valid JSON.', status: 400, data: { var_name: 'x' } }, `${JSON.stringify(raw)} is not JSON`);
  }
});

t.test('str keeps text as sent', async (t) => {
  t.equal(decodeOne(str(), '["a"]'), '["a"]', 'JSON-looking text stays text');
  t.equal(decodeOne(str(), ''), '');
  t.equal(decodeOne(str(), 'héllo 👋'), 'héllo 👋');
  t.equal(decodeOne(str(), 5), '5', 'a number from a JSON body');
  t.equal(decodeOne(str(), false), 'false');
  t.match(failure(() => decodeOne(str(), { a: 1 })), { code: 'BAD_REQUEST', msg: 'x is not a string' });
  t.match(failure(() => decodeOne(str(), 'a\u0000b')), { code: 'BAD_REQUEST', msg: 'x must not contain null bytes' });
  t.equal(decodeOne(str({ maxLength: 3 }), 'abc'), 'abc');
  t.match(failure(() => decodeOne(str({ maxLength: 3 }), 'abcd')), { code: 'BAD_REQUEST', msg: 'x is too long (limit: 3 characters)' });
});

t.test('json decodes lists and objects and checks them against the schema', async (t) => {
  const ids = json(Type.Array(Type.Integer()));
  t.same(decodeOne(ids, '[1,2,3]'), [1, 2, 3]);
  t.same(decodeOne(ids, '[]'), []);
  t.same(decodeOne(ids, [4, 5]), [4, 5], 'already decoded (JSON body)');
  const obj = json(Type.Object({ name: Type.String(), n: Type.Optional(Type.Integer()) }));
  t.same(decodeOne(obj, '{"name":"a","n":2}'), { name: 'a', n: 2 });

  const notJson: unknown[] = ['[1,2', '{', "['a']", 'undefined', '[1,]', ''];
  for (const raw of notJson) {
    t.same(failure(() => decodeOne(ids, raw)), { code: 'BAD_REQUEST', msg: 'Argument "x" is not valid JSON.', status: 400, data: { var_name: 'x' } }, `${JSON.stringify(raw)}`);
  }
  t.match(failure(() => decodeOne(ids, '["a"]')), { code: 'BAD_REQUEST', msg: /^Invalid x\[0\]/, data: { var_name: 'x' } });
  t.match(failure(() => decodeOne(ids, '{"a":1}')), { code: 'BAD_REQUEST', msg: /^Invalid x/ });
  t.match(failure(() => decodeOne(obj, '{"name":5}')), { code: 'BAD_REQUEST', msg: /^Invalid x\[name\]/ });
  t.match(failure(() => decodeOne(ids, '[1.5]')), { code: 'BAD_REQUEST' }, 'fractions are not integers');
  t.match(failure(() => decodeOne(json(Type.Array(Type.Integer()), 'Bad ids'), '["a"]')), { code: 'BAD_REQUEST', msg: 'Bad ids' }, 'custom message');
  // JSON.parse would round these to a neighbouring id without a word.
  for (const raw of ['[9007199254740993]', '[1, -9007199254740993]', '{"name":"a","n":1e20}']) {
    t.same(failure(() => (raw.startsWith('{') ? decodeOne(obj, raw) : decodeOne(ids, raw))), { code: 'BAD_REQUEST', msg: 'Invalid x: integer out of range', status: 400, data: { var_name: 'x' } }, `${raw} is refused`);
  }
  t.same(decodeOne(ids, '[9007199254740991]'), [Number.MAX_SAFE_INTEGER], '2^53 - 1 is still fine');
  t.same(decodeOne(json(Type.Number()), '1.5e3'), 1500, 'a float is a float');
});

t.test('json keeps prototype-polluting keys as plain data', async (t) => {
  const anyObj = json(Type.Record(Type.String(), Type.Unknown()));
  const v = decodeOne(anyObj, '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as Record<string, unknown>;
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
  t.ok(Object.hasOwn(v, '__proto__'), '__proto__ is an own key, not the prototype');
});

t.test('oneOf', async (t) => {
  const dir = oneOf(['newest', 'oldest'] as const);
  t.equal(decodeOne(dir, 'newest'), 'newest');
  t.same(failure(() => decodeOne(dir, 'middle')), { code: 'BAD_REQUEST', msg: 'Invalid x', status: 400, data: { var_name: 'x' } });
  t.same(failure(() => decodeOne(dir, '"newest"')), { code: 'BAD_REQUEST', msg: 'Invalid x', status: 400, data: { var_name: 'x' } }, 'no JSON quoting');
  t.match(failure(() => decodeOne(dir, 5)), { code: 'BAD_REQUEST', msg: 'Invalid x' });
});

t.test('custom decoders and decodeJsonField', async (t) => {
  const anchor = custom((raw, name) => {
    if (raw === 'newest' || raw === 'oldest') return raw;
    const v = decodeJsonField(raw, name);
    if (typeof v !== 'number') throw new AppError('BAD_REQUEST', 'Invalid anchor', 400);
    return v;
  });
  t.equal(decodeOne(anchor, 'newest'), 'newest');
  t.equal(decodeOne(anchor, '42'), 42);
  t.match(failure(() => decodeOne(anchor, '{')), { msg: 'Argument "x" is not valid JSON.' });
  t.match(failure(() => decodeOne(anchor, '"a"')), { msg: 'Invalid anchor' });
});

t.test('missing, optional and unknown parameters', async (t) => {
  t.same(failure(() => parseParams({}, { stream: str() })), {
    code: 'REQUEST_VARIABLE_MISSING',
    msg: "Missing 'stream' argument",
    status: 400,
    data: { var_name: 'stream' },
  });
  const specs = { a: int().optional(3), b: bool().optional(), c: str().optional('x') };
  t.same(parseParams({}, specs), { values: { a: 3, b: undefined, c: 'x' }, ignored: [] }, 'defaults');
  t.same(parseParams({ a: undefined }, specs).values.a, 3, 'an undefined value counts as absent');

  const parsed = parseParams({ a: '1', zz: 'q', yy: '[1]' }, specs);
  t.same(parsed.values, { a: 1, b: undefined, c: 'x' });
  t.same(parsed.ignored.sort(), ['yy', 'zz'], 'unknown names are reported, not refused');

  // The first failing spec decides; an unknown name never hides a missing one.
  t.match(failure(() => parseParams({ unknown: '1' }, { a: int(), b: int() })), { code: 'REQUEST_VARIABLE_MISSING', data: { var_name: 'a' } });
});

t.test('names inherited from Object.prototype are not parameters', async (t) => {
  // A spec named like a prototype member must not read it off the object.
  t.match(failure(() => parseParams({}, { constructor: str(), toString: str() })), { code: 'REQUEST_VARIABLE_MISSING', data: { var_name: 'constructor' } });
  const raw = Object.create(null) as Record<string, unknown>;
  raw.__proto__ = 'x';
  const parsed = parseParams(raw, { a: str().optional() });
  t.same(parsed.ignored, ['__proto__']);
  t.equal(({} as Record<string, unknown>).x, undefined);
});

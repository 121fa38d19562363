/** rawParams: how the gateway merges a request's query string and body before decoding. */
import t from 'tap';
import type { FastifyRequest } from 'fastify';
import { AppError } from '@zc/shared/errors';
import { MULTIPART_FIELD_LIMIT, rawParams } from '../../src/plugins/params.js';

function req(o: { query?: unknown; body?: unknown; contentType?: string; multipart?: boolean }): FastifyRequest {
  return {
    query: o.query ?? {},
    body: o.body,
    headers: o.contentType ? { 'content-type': o.contentType } : {},
    isMultipart: () => o.multipart ?? false,
  } as unknown as FastifyRequest;
}

const plain = (o: Record<string, unknown>) => ({ ...o });

t.test('query and body merge, the body winning', async (t) => {
  const r = rawParams(req({ query: { a: '1', b: '2' }, body: { b: '3', c: '4' }, contentType: 'application/x-www-form-urlencoded' }));
  t.same(plain(r), { a: '1', b: '3', c: '4' });
  t.equal(Object.getPrototypeOf(r), null, 'no prototype to pollute or inherit from');
});

t.test('a key sent twice in a form or query string keeps its last value', async (t) => {
  t.same(plain(rawParams(req({ query: { a: ['1', '2'] } }))), { a: '2' });
  t.same(plain(rawParams(req({ body: { a: ['x', 'y', 'z'] }, contentType: 'application/x-www-form-urlencoded' }))), { a: 'z' });
  t.same(plain(rawParams(req({ body: { a: ['x', 'y'] }, contentType: 'multipart/form-data; boundary=b', multipart: true }))), { a: 'y' });
});

t.test('arrays in a JSON body are values, not repeated keys', async (t) => {
  t.same(plain(rawParams(req({ body: { to: [1, 2], flag: true }, contentType: 'application/json' }))), { to: [1, 2], flag: true });
  t.same(plain(rawParams(req({ body: { to: [1, 2] }, contentType: 'application/vnd.api+json; charset=utf-8' }))), { to: [1, 2] });
  t.same(plain(rawParams(req({ query: { to: ['1', '2'] }, body: {}, contentType: 'application/json' }))), { to: '2' }, 'the query string of a JSON request is still a query string');
});

t.test('bodies that are not key/value objects are ignored', async (t) => {
  t.same(plain(rawParams(req({ query: { a: '1' }, body: Buffer.from('x') }))), { a: '1' });
  t.same(plain(rawParams(req({ query: { a: '1' }, body: 'text body' }))), { a: '1' });
  t.same(plain(rawParams(req({ query: { a: '1' }, body: null }))), { a: '1' });
});

t.test('prototype-named keys become plain own entries', async (t) => {
  const body = JSON.parse('{"__proto__":"x","constructor":"y"}') as Record<string, unknown>;
  const r = rawParams(req({ body, contentType: 'application/x-www-form-urlencoded' }));
  t.same(Object.keys(r).sort(), ['__proto__', 'constructor']);
  t.equal(r.__proto__, 'x');
  t.equal(({} as Record<string, unknown>).x, undefined);
});

t.test('a multipart field that reached busboy\'s size limit was truncated: 413', async (t) => {
  const full = 'a'.repeat(MULTIPART_FIELD_LIMIT);
  try {
    rawParams(req({ body: { username: full }, contentType: 'multipart/form-data; boundary=b', multipart: true }));
    t.fail('should have thrown');
  } catch (e) {
    t.ok(e instanceof AppError);
    t.match(e, { code: 'PAYLOAD_TOO_LARGE', httpStatus: 413, message: 'Request body too large' });
  }
  const justUnder = 'a'.repeat(MULTIPART_FIELD_LIMIT - 1);
  t.equal(rawParams(req({ body: { username: justUnder }, multipart: true })).username, justUnder);
  t.equal(rawParams(req({ query: { q: full } })).q, full, 'the limit is about multipart bodies only');
});

/**
 * Input no endpoint accepts (issue 13, "500s"): NUL bytes in parameters and path segments,
 * lone UTF-16 surrogates in JSON bodies, JSON nested thousands deep, ids beyond 2^63, and
 * what Node and Fastify refuse before any route runs (431, 414, 400, 413). Each is answered
 * 4xx in the error envelope, never 500.
 */
import t from 'tap';
import { request } from 'undici';
import { startSystem } from '../harness.js';

interface Probe {
  name: string;
  method: string;
  path: string;
  body?: string;
  contentType?: string;
  headers?: Record<string, string>;
  status?: number;
  msg?: string;
}

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const big = '99999999999999999999';

const PROBES: Probe[] = [
  // NUL bytes
  { name: 'NUL in a query parameter', method: 'GET', path: '/api/v1/users?client_gravatar=%00' },
  { name: 'NUL in a stream name', method: 'POST', path: '/api/v1/messages', body: 'type=stream&to=Denmark%00&topic=x&content=hi' },
  { name: 'NUL in JSON-in-form', method: 'POST', path: '/api/v1/users/me/subscriptions', body: `subscriptions=${encodeURIComponent('[{"name":"a\\u0000b"}]')}` },
  { name: 'NUL in a JSON body string', method: 'POST', path: '/api/v1/messages', contentType: 'application/json', body: '{"type":"stream","to":"Denmark","topic":"a\\u0000b","content":"hi"}' },
  { name: 'NUL in a path segment', method: 'GET', path: '/api/v1/users/%00', msg: 'who must not contain null bytes' },
  { name: 'NUL in a path segment (email)', method: 'GET', path: '/api/v1/users/a%00b@zulip.test' },
  { name: 'NUL in a parameter name', method: 'GET', path: '/api/v1/users?a%00b=1', msg: 'parameter name must not contain null bytes' },
  { name: 'NUL in a narrow operand', method: 'GET', path: `/api/v1/messages?anchor=newest&num_before=1&num_after=0&narrow=${encodeURIComponent('[{"operator":"search","operand":"a\\u0000"}]')}`, msg: 'narrow must not contain null bytes' },
  { name: 'NUL in a draft topic', method: 'POST', path: '/api/v1/drafts', body: `drafts=${encodeURIComponent('[{"type":"stream","to":[1],"topic":"a\\u0000","content":"x"}]')}` },
  // Lone surrogates
  { name: 'lone surrogate in a JSON body', method: 'POST', path: '/api/v1/messages', contentType: 'application/json', body: '{"type":"stream","to":"Denmark","topic":"t","content":"a\\ud800b"}', msg: 'content is not valid Unicode' },
  { name: 'lone surrogate in JSON-in-form', method: 'POST', path: '/api/v1/users/me/subscriptions', body: `subscriptions=${encodeURIComponent('[{"name":"a\\udc00"}]')}`, msg: 'subscriptions is not valid Unicode' },
  { name: 'lone surrogate in a draft', method: 'POST', path: '/api/v1/drafts', body: `drafts=${encodeURIComponent('[{"type":"stream","to":[1],"topic":"t","content":"\\ud83d"}]')}` },
  { name: 'lone surrogate in a JSON-body alert word', method: 'POST', path: '/api/v1/users/me/alert_words', contentType: 'application/json', body: '{"alert_words":["\\udfff"]}' },
  { name: 'lone surrogate in settings', method: 'PATCH', path: '/api/v1/settings', contentType: 'application/json', body: '{"full_name":"x\\ud800"}' },
  // Deep JSON
  { name: 'JSON body nested 4000 deep', method: 'POST', path: '/api/v1/messages', contentType: 'application/json', body: `{"type":"stream","to":${deep(4000)}}` },
  { name: 'JSON object body nested 4000 deep', method: 'PATCH', path: '/api/v1/settings', contentType: 'application/json', body: deepObject(4000), msg: 'a is nested too deeply' },
  { name: 'JSON-in-form nested 4000 deep', method: 'POST', path: '/api/v1/users/me/subscriptions', body: `subscriptions=${encodeURIComponent(deep(4000))}`, msg: 'subscriptions is nested too deeply' },
  { name: 'narrow nested 1500 deep', method: 'GET', path: `/api/v1/messages?anchor=newest&num_before=1&num_after=0&narrow=${encodeURIComponent(deep(1500))}` },
  { name: 'drafts nested 4000 deep', method: 'POST', path: '/api/v1/drafts', body: `drafts=${encodeURIComponent(deep(4000))}` },
  // Ids beyond 2^63
  { name: 'message id beyond 2^63 in the path', method: 'GET', path: `/api/v1/messages/${big}`, msg: 'message_id is too large' },
  { name: 'message id beyond 2^63 (PATCH)', method: 'PATCH', path: `/api/v1/messages/${big}`, body: 'content=x' },
  { name: 'user id beyond 2^63', method: 'GET', path: `/api/v1/users/${big}`, msg: 'who is too large' },
  { name: 'stream id beyond 2^63', method: 'GET', path: `/api/v1/streams/${big}` },
  { name: 'stream id beyond 2^63 in a form', method: 'POST', path: '/api/v1/messages', body: `type=stream&to=${big}&topic=x&content=hi` },
  { name: 'stream ids beyond 2^63 in JSON', method: 'POST', path: '/api/v1/messages', body: `type=stream&to=[${big}]&topic=x&content=hi` },
  { name: 'anchor beyond 2^63', method: 'GET', path: `/api/v1/messages?anchor=${big}&num_before=1&num_after=0` },
  { name: 'user group id beyond 2^63', method: 'GET', path: `/api/v1/user_groups/${big}/members` },
  { name: 'draft id beyond 2^63', method: 'DELETE', path: `/api/v1/drafts/${big}` },
  { name: 'message ids beyond 2^63 in flags', method: 'POST', path: '/api/v1/messages/flags', body: `messages=[${big}]&op=add&flag=read` },
  { name: 'attachment id beyond 2^63', method: 'DELETE', path: `/api/v1/attachments/${big}` },
  { name: 'linkifier id beyond 2^63', method: 'DELETE', path: `/api/v1/realm/filters/${big}` },
  { name: 'event queue last_event_id beyond 2^63', method: 'GET', path: `/api/v1/events?queue_id=x&last_event_id=${big}&dont_block=true` },
  // What Fastify and Node refuse themselves
  { name: 'malformed JSON', method: 'POST', path: '/api/v1/messages', contentType: 'application/json', body: '{"type":', status: 400 },
  { name: 'unsupported content type', method: 'POST', path: '/api/v1/messages', contentType: 'text/xml', body: '<a/>', status: 415 },
  { name: 'body over the limit', method: 'POST', path: '/api/v1/messages', body: `content=${'x'.repeat(2 * 1024 * 1024)}`, status: 413 },
  { name: 'a path segment too long', method: 'GET', path: `/api/v1/users/${'1'.repeat(5000)}`, status: 414, msg: 'URL path segment too long' },
  { name: 'a malformed percent-escape', method: 'GET', path: '/api/v1/users/%E0%A4%A', status: 400, msg: 'Malformed URL' },
  { name: 'headers too large', method: 'GET', path: '/api/v1/users', headers: { 'x-big': 'x'.repeat(20_000), msg: 'Request header fields too large' }, status: 431 },
  { name: 'a URL too long', method: 'GET', path: `/api/v1/users?x=${'y'.repeat(20_000)}`, status: 431 },
];

t.test('input no endpoint accepts is answered 4xx in the envelope', async (t) => {
  const sys = await startSystem(t);
  const auth = `Basic ${Buffer.from(`${sys.people.hamlet.email}:${sys.people.hamlet.api_key}`).toString('base64')}`;
  for (const p of PROBES) {
    t.test(p.name, async (t) => {
      const res = await request(`${sys.baseUrl}${p.path}`, {
        method: p.method as 'GET',
        headers: { authorization: auth, 'content-type': p.contentType ?? 'application/x-www-form-urlencoded', ...p.headers },
        body: p.body,
      });
      const text = await res.body.text();
      let body: { result?: string; msg?: string; code?: string } = {};
      try {
        body = JSON.parse(text);
      } catch {
        /* checked below */
      }
      t.ok(res.statusCode >= 400 && res.statusCode < 500, `4xx, got ${res.statusCode}: ${text.slice(0, 200)}`);
      if (p.status) t.equal(res.statusCode, p.status);
      if (p.msg) t.equal(body.msg, p.msg);
      t.equal(body.result, 'error', 'the error envelope');
      t.type(body.msg, 'string');
      t.type(body.code, 'string');
    });
  }
});

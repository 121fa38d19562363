// k6 scenario: team chat as real clients use it (operations.md §5.2). Each virtual user is one
// seeded account: POST /register, then a loop of POST /messages (with an Idempotency-Key) to a
// stream everyone is in, long-polling GET /events until its own message arrives, and a
// history fetch. The headline number is send_to_receive: from the send's 200 to the event.
//
//   node ../seed.mjs --base-url URL --email ADMIN --api-key KEY --users 50 --out accounts.json
//   k6 run -e ACCOUNTS=accounts.json [-e VUS=50] [-e DURATION=5m] chat.js
//
// Switch the server's rate limits off for load (ZC_RATE_LIMIT_PER_MINUTE=0), or expect 429s.
import http from 'k6/http';
import encoding from 'k6/encoding';
import { check, fail } from 'k6';
import { Counter, Trend } from 'k6/metrics';

const seed = JSON.parse(open(__ENV.ACCOUNTS || 'accounts.json'));
const BASE = (__ENV.BASE_URL || seed.base_url).replace(/\/$/, '');
const VUS = Number(__ENV.VUS || Math.min(seed.accounts.length, 20));

export const options = {
  scenarios: {
    chat: { executor: 'constant-vus', vus: VUS, duration: __ENV.DURATION || '2m' },
  },
  thresholds: {
    http_req_failed: ['rate<0.01'],
    send_to_receive: ['p(95)<1000', 'p(99)<2000'],
    'http_req_duration{name:POST /messages}': ['p(95)<500'],
  },
};

const sendToReceive = new Trend('send_to_receive', true);
const lostQueues = new Counter('bad_event_queue_id');

function auth(a) {
  return { Authorization: `Basic ${encoding.b64encode(`${a.email}:${a.api_key}`)}` };
}

function form(params) {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : JSON.stringify(v))}`)
    .join('&');
}

function register(a) {
  const r = http.post(`${BASE}/api/v1/register`, form({ event_types: ['message'], apply_markdown: true }), {
    headers: { ...auth(a), 'Content-Type': 'application/x-www-form-urlencoded' },
    tags: { name: 'POST /register' },
  });
  if (!check(r, { 'register 200': (x) => x.status === 200 })) fail(`register: ${r.status} ${r.body}`);
  const body = r.json();
  return { id: body.queue_id, last: body.last_event_id, timeout: Number(body.event_queue_longpoll_timeout_seconds || 90) };
}

const state = {};

export default function () {
  const a = seed.accounts[(__VU - 1) % seed.accounts.length];
  const stream = seed.streams[__VU % seed.streams.length];
  if (!state.queue) state.queue = register(a);

  const token = `k6-${__VU}-${__ITER}-${Date.now()}`;
  const sent = http.post(`${BASE}/api/v1/messages`, form({ type: 'stream', to: stream, topic: `vu ${__VU}`, content: token }), {
    headers: { ...auth(a), 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': token },
    tags: { name: 'POST /messages' },
  });
  check(sent, { 'send 200': (x) => x.status === 200 });
  const sentAt = Date.now();
  if (sent.status !== 200) return;

  // Long-poll until our own message comes back (heartbeats and others' messages go by).
  for (let polls = 0; polls < 20; polls++) {
    const q = state.queue;
    const r = http.get(`${BASE}/api/v1/events?queue_id=${encodeURIComponent(q.id)}&last_event_id=${q.last}`, {
      headers: auth(a),
      timeout: `${q.timeout + 10}s`,
      tags: { name: 'GET /events' },
    });
    if (r.status === 400 && r.json('code') === 'BAD_EVENT_QUEUE_ID') {
      lostQueues.add(1);
      state.queue = register(a);
      return;
    }
    if (!check(r, { 'events 200': (x) => x.status === 200 })) return;
    let mine = false;
    for (const e of r.json('events') || []) {
      q.last = Math.max(q.last, e.id);
      if (e.type === 'message' && e.message && String(e.message.content).includes(token)) mine = true;
    }
    if (mine) {
      sendToReceive.add(Date.now() - sentAt);
      break;
    }
  }

  const hist = http.get(`${BASE}/api/v1/messages?${form({ anchor: 'newest', num_before: 20, num_after: 0, narrow: [{ operator: 'stream', operand: stream }] })}`, {
    headers: auth(a),
    tags: { name: 'GET /messages' },
  });
  check(hist, { 'history 200': (x) => x.status === 200 });
}

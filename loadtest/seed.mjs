#!/usr/bin/env node
// Load-test seeder: creates users, streams and history through the public API of any running
// server (no database access, no source tree: only Node 20+). Deterministic names from --run,
// so a second run with the same --run reuses what exists. Writes the accounts k6 needs.
//
//   node seed.mjs --base-url https://chat.example.com --email admin@example.com --api-key KEY \
//     [--run lt1] [--users 50] [--streams 5] [--messages 20] [--password pw] [--out accounts.json]
//
// The admin account needs the can_create_users permission
// (node scripts/manage.mjs grant --realm SUB --email E --permission can_create_users).
// For realistic numbers switch rate limits off on the server (ZC_RATE_LIMIT_PER_MINUTE=0).
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: o } = parseArgs({
  options: {
    'base-url': { type: 'string' },
    email: { type: 'string' },
    'api-key': { type: 'string' },
    run: { type: 'string', default: 'lt' },
    users: { type: 'string', default: '20' },
    streams: { type: 'string', default: '3' },
    messages: { type: 'string', default: '10' },
    password: { type: 'string', default: 'load-test-password' },
    out: { type: 'string', default: 'accounts.json' },
    help: { type: 'boolean' },
  },
});
if (o.help || !o['base-url'] || !o.email || !o['api-key']) {
  process.stdout.write('Usage: node seed.mjs --base-url URL --email ADMIN_EMAIL --api-key KEY [--run ID] [--users N] [--streams N] [--messages N] [--password P] [--out FILE]\n');
  process.exit(o.help ? 0 : 2);
}
const base = o['base-url'].replace(/\/$/, '');
const count = (name) => {
  const n = Number(o[name]);
  if (!Number.isInteger(n) || n < 0) {
    process.stderr.write(`--${name} must be a whole number\n`);
    process.exit(2);
  }
  return n;
};
const [nUsers, nStreams, nMessages] = [count('users'), count('streams'), count('messages')];

async function call(auth, method, path, params = {}) {
  const body = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${base}/api/v1${path}${method === 'GET' ? `?${body}` : ''}`, {
      method,
      headers: {
        ...(auth ? { authorization: `Basic ${Buffer.from(`${auth.email}:${auth.api_key}`).toString('base64')}` } : {}),
        ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(method === 'GET' ? {} : { body }),
    });
    const json = await res.json().catch(() => ({}));
    // Rate limited: wait as told, then again.
    if (res.status === 429 && attempt < 20) {
      await new Promise((r) => setTimeout(r, 1000 * Number(json['retry-after'] ?? 1)));
      continue;
    }
    return { status: res.status, json };
  }
}

const admin = { email: o.email, api_key: o['api-key'] };
const me = await call(admin, 'GET', '/users/me');
if (me.status !== 200) {
  process.stderr.write(`cannot authenticate as ${o.email} at ${base}: ${me.status} ${JSON.stringify(me.json)}\n`);
  process.exit(1);
}
const host = new URL(base).hostname.includes('.') ? new URL(base).hostname : 'example.com';
const accounts = [];
for (let i = 0; i < nUsers; i++) {
  const email = `${o.run}-user${i}@${host}`;
  const created = await call(admin, 'POST', '/users', { email, password: o.password, full_name: `${o.run} user ${i}` });
  if (created.status !== 200 && !/already in use/i.test(String(created.json.msg))) throw new Error(`creating ${email}: ${created.status} ${JSON.stringify(created.json)}`);
  const key = await call(null, 'POST', '/fetch_api_key', { username: email, password: o.password });
  if (key.status !== 200) throw new Error(`fetching the API key of ${email}: ${key.status} ${JSON.stringify(key.json)} (a user from an earlier run with another --password?)`);
  accounts.push({ email, api_key: key.json.api_key, user_id: key.json.user_id });
}
const streams = Array.from({ length: nStreams }, (_, i) => `${o.run}-stream${i}`);
if (streams.length && accounts.length) {
  // Everyone in every stream: the fan-out a busy team stream has.
  const r = await call(admin, 'POST', '/users/me/subscriptions', { subscriptions: streams.map((name) => ({ name })), principals: accounts.map((a) => a.user_id) });
  if (r.status !== 200) throw new Error(`subscribing: ${r.status} ${JSON.stringify(r.json)}`);
}
let sent = 0;
for (const stream of streams) {
  for (let m = 0; m < nMessages; m++) {
    const from = accounts[(m + sent) % accounts.length] ?? admin;
    const r = await call(from, 'POST', '/messages', { type: 'stream', to: stream, topic: `topic ${m % 5}`, content: `history ${m} of ${stream}` });
    if (r.status === 200) sent++;
    else throw new Error(`sending history: ${r.status} ${JSON.stringify(r.json)}`);
  }
}
writeFileSync(o.out, `${JSON.stringify({ base_url: base, run: o.run, streams, accounts }, null, 2)}\n`, { mode: 0o600 });
process.stdout.write(`${JSON.stringify({ users: accounts.length, streams: streams.length, messages: sent, out: o.out })}\n`);

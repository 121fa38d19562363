/**
 * The largest subscribe call the limits allow (1,000 new streams for 10 users: 10,000 pairs;
 * lib/request-limits.ts), creating described, announced streams in a realm with other
 * people) commits and answers well within the gateway's 10 s request timeout: a call that
 * outlives it is answered 503 while it still commits, and a client retrying it then finds
 * half its streams made by a call it was told failed. The 200 is the proof that it finished in
 * time; how fast it is belongs to the bench (a shared machine makes any bound here flaky).
 */
import t from 'tap';
import { startSystem } from '../harness.js';

const STREAMS = Number(process.env.ZC_BULK_STREAMS) || 1000;
/** Extra members subscribed by the same call (the call's pairs: streams x (users + 2)). */
const USERS = Number(process.env.ZC_BULK_USERS) || 8;

t.test(`creating ${STREAMS} streams in one subscribe call`, async (t) => {
  const sys = await startSystem(t);
  const { iago, hamlet } = sys.people;
  const extra = [];
  for (let i = 0; i < USERS; i++) extra.push(await sys.createUser({ email: `bulk${i}@zulip.test`, full_name: `Bulk ${i}` }));
  const names = Array.from({ length: STREAMS }, (_, i) => `new bulk ${String(i).padStart(4, '0')}`);
  const started = Date.now();
  const r = await sys.client(iago).post('/users/me/subscriptions', {
    subscriptions: names.map((name, i) => ({ name, description: `Stream **${i}** of the bulk, see #**new bulk 0000**` })),
    principals: [iago.user_id, hamlet.user_id, ...extra.map((u) => u.user_id)],
    announce: true,
  });
  const ms = Date.now() - started;
  t.equal(r.status, 200, r.status === 200 ? `answered in ${ms} ms` : `refused after ${ms} ms: ${JSON.stringify(r.body).slice(0, 200)}`);
  t.equal((r.body.subscribed as Record<string, string[]>)?.[hamlet.email]?.length, STREAMS, 'every stream subscribed');
});

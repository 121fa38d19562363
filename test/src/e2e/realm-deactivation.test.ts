/**
 * Deactivating a realm as an operator does (`npm run manage -- deactivate-realm`, Zulip's
 * deactivate_realm): when the command returns every user's API key is refused on the gateway
 * (even one it had cached), a poll parked on a queue gets the `realm`/`deactivated` event, and
 * the realm's queues are dropped, whatever they were registered for. Reactivation lets the same
 * keys in again.
 */
import t from 'tap';
import { Redis } from 'ioredis';
import { startSystem } from '../harness.js';
import { manage, manageEnv } from './manage-support.js';

t.setTimeout(120_000);

t.test('deactivate-realm: keys refused at once, clients told, queues dropped; reactivate-realm lets them in again', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello } = sys.people;
  const env = manageEnv(sys);
  const redis = new Redis(sys.env.infra.redisUrl);
  t.teardown(() => redis.disconnect());
  const queueExists = async (queueId: string) => (await redis.exists(`${sys.env.prefix}:evq:{${queueId}}:meta`)) === 1;

  const h = sys.client(hamlet);
  const o = sys.client(othello);
  const hq = await h.post('/register', {});
  t.equal(hq.status, 200);
  // A queue that would never receive a realm event is dropped all the same.
  const oq = await o.post('/register', { event_types: JSON.stringify(['message']) });
  t.equal(oq.status, 200);
  t.equal((await o.get('/users/me')).status, 200, "othello's key is in the gateway's cache");
  const parked = h.get('/events', { queue_id: hq.body.queue_id as string, last_event_id: hq.body.last_event_id as number });
  await new Promise((r) => setTimeout(r, 300));

  const off = await manage(['deactivate-realm', '--realm', ''], env);
  t.match(off, { code: 0, json: { realm_id: sys.realmId, changed: true, credentials_revoked: true } }, off.stderr);

  const refused = await o.get('/users/me');
  t.equal(refused.status, 401, 'a cached key is refused as soon as the command has returned');
  t.same(refused.body, { result: 'error', msg: 'This organization has been deactivated', code: 'REALM_DEACTIVATED' });
  t.equal((await h.post('/messages', { type: 'private', to: JSON.stringify([othello.user_id]), content: 'still here?' })).status, 401);

  const polled = await parked;
  t.equal(polled.status, 200);
  const told = (polled.body.events as Array<Record<string, unknown>>).filter((e) => e.type === 'realm');
  t.match(told, [{ type: 'realm', op: 'deactivated', realm_id: sys.realmId, id: Number }], 'the parked poll gets the realm deactivated event');
  t.equal(told.length, 1);

  let left = [true, true];
  for (let i = 0; i < 100 && left.some(Boolean); i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await Promise.all([queueExists(hq.body.queue_id as string), queueExists(oq.body.queue_id as string)]);
  }
  t.same(left, [false, false], "the realm's queues are dropped");

  const again = await manage(['deactivate-realm', '--realm', ''], env);
  t.match(again, { code: 0, json: { changed: false } }, 'twice: nothing to do');

  const on = await manage(['reactivate-realm', '--realm', ''], env);
  t.match(on, { code: 0, json: { changed: true, credentials_revoked: true } }, on.stderr);
  t.equal((await o.get('/users/me')).status, 200, 'the same key works again');
  const stale = await h.get('/events', { queue_id: hq.body.queue_id as string, last_event_id: -1, dont_block: 'true' });
  t.match(stale.body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID' }, 'an old queue stays gone: the client registers again');
  t.equal((await h.post('/register', {})).status, 200);
});

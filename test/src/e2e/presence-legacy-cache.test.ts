/**
 * The legacy presence answer (GET /realm/presence keyed by email) comes from each gateway
 * replica's in-memory copy of the realm's display emails (the users service's when it answers):
 * a change of address, a deactivation or a reactivation shows in the very next read, whichever
 * replica answers it.
 */
import t from 'tap';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { Redis } from '@zc/shared/redis';
import { doChangeEmail, makeDeps } from '@zc/users/manage';
import { startSystem } from '../harness.js';

type Json = Record<string, unknown>;

// Reads alternate between the gateways; enough that both users replicas (a NATS queue group picks one at random) answer some too.
const READS = 8;

t.test('legacy presence follows people changes on every replica', async (t) => {
  const sys = await startSystem(t, { replicas: { users: 2, gateway: 2 } });
  const { iago, othello } = sys.people;
  const readers = sys.gatewayUrls.map((baseUrl) => sys.client(othello, { baseUrl }));
  t.equal(readers.length, 2);
  const config = loadConfig(sys.env.config);
  const pool = createPool(sys.env.databaseUrl, { max: 1 });
  const redis = new Redis(config.redisUrl);
  t.teardown(async () => {
    redis.disconnect();
    await pool.end();
  });
  // The operator's CLI path (scripts/manage.mjs change-email): the users service's action with Redis.
  const adminDeps = makeDeps({ pool, config, redis, log: createLogger({ service: 'test', level: 'silent' }) });

  const reads = async (): Promise<Json[]> => {
    const out: Json[] = [];
    for (let i = 0; i < READS; i++) {
      const r = await readers[i % readers.length]!.get('/realm/presence');
      t.equal(r.status, 200);
      out.push(r.body.presences as Json);
    }
    return out;
  };

  const mover = await sys.createUser({ email: 'mover@zulip.test', full_name: 'Mover' });
  const m = sys.client(mover);
  t.equal((await m.post('/users/me/presence', { status: 'active' })).status, 200);
  for (const p of await reads()) {
    t.match(p['mover@zulip.test'], { website: { status: 'active', client: 'website', pushable: false }, aggregated: { status: 'active' } }, 'listed under the address');
  }

  t.test('an address change shows at once', async (t) => {
    t.same(await doChangeEmail(adminDeps, sys.realmId, mover.user_id, 'moved@zulip.test'), { changed: true });
    for (const p of await reads()) {
      t.notOk(p['mover@zulip.test'], 'not under the old address');
      t.ok(p['moved@zulip.test'], 'under the new one');
    }
    for (const reader of readers) {
      const ping = (await reader.post('/users/me/presence', { status: 'active' })).body.presences as Json;
      t.ok(ping['moved@zulip.test'] && !ping['mover@zulip.test'], "a ping's legacy answer too");
    }
  });

  t.test('a deactivated user is gone at once, and back once reactivated', async (t) => {
    const admin = sys.client(iago);
    t.equal((await admin.delete(`/users/${mover.user_id}`)).status, 200);
    for (const p of await reads()) t.notOk(p['moved@zulip.test'], 'gone');
    const re = await admin.post(`/users/${mover.user_id}/reactivate`);
    t.equal(re.status, 200, JSON.stringify(re.body));
    // Clients authenticate with the address: the new one since the change.
    const back = await sys.client({ ...mover, email: 'moved@zulip.test' }).post('/users/me/presence', { status: 'idle' });
    t.equal(back.status, 200, JSON.stringify(back.body));
    for (const p of await reads()) t.match(p['moved@zulip.test'], { website: { status: 'idle' } }, 'listed again');
  });

  t.test('a new user is listed from their first ping', async (t) => {
    const fresh = await sys.createUser({ email: 'fresh@zulip.test', full_name: 'Fresh' });
    t.equal((await sys.client(fresh).post('/users/me/presence', { status: 'active' })).status, 200);
    for (const p of await reads()) {
      t.ok(p['fresh@zulip.test'], 'listed');
      t.ok(p['moved@zulip.test'], 'the others still listed');
    }
  });
});

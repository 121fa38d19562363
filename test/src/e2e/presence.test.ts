/**
 * Presence end to end (POST /users/me/presence, GET /realm/presence, GET /users/{id}/presence,
 * /register's presences, presence events): the shapes Zulip's clients read and every error.
 */
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { PresenceEvent } from '@zc/shared/contracts/client-events';
import { credentialTokenKey } from '@zc/shared/redis';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

type Json = Record<string, unknown>;

t.test('presence', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, polonius, bot, desdemona } = sys.people;
  const h = sys.client(hamlet);
  const o = sys.client(othello);
  const now = () => Date.now() / 1000;

  t.test('bad requests', async (t) => {
    const bad = await h.post('/users/me/presence', { status: 'sleepy' });
    t.equal(bad.status, 400);
    t.match(bad.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid status: sleepy' });
    const missing = await h.post('/users/me/presence', {});
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'status' argument" });
    const notBool = await h.post('/users/me/presence', { status: 'active', ping_only: 'perhaps' });
    t.match(notBool.body, { code: 'BAD_REQUEST', msg: /ping_only/ });
    const badId = await h.post('/users/me/presence', { status: 'active', last_update_id: 'x' });
    t.match(badId.body, { code: 'BAD_REQUEST', msg: /last_update_id/ });
    const noAuth = await sys.anonymous().post('/users/me/presence', { status: 'active' });
    t.equal(noAuth.status, 401);
  });

  t.test('a user without presence data', async (t) => {
    const r = await h.get(`/users/${desdemona.user_id}/presence`);
    t.equal(r.status, 400);
    t.match(r.body, { code: 'BAD_REQUEST', msg: `No presence data for ${desdemona.user_id}` });
  });

  let hamletUpdateId = 0;
  t.test('a ping returns the realm presence in the format asked for', async (t) => {
    const before = now();
    const slim = await h.post('/users/me/presence', { status: 'active', new_user_input: true, slim_presence: true });
    t.equal(slim.status, 200, JSON.stringify(slim.body));
    const mine = (slim.body.presences as Json)[String(hamlet.user_id)] as Json;
    t.ok(mine, 'modern format is keyed by user id');
    t.same(Object.keys(mine).sort(), ['active_timestamp', 'idle_timestamp']);
    t.ok((mine.active_timestamp as number) >= Math.floor(before) && mine.active_timestamp === mine.idle_timestamp);
    t.type(slim.body.server_timestamp, 'number');
    hamletUpdateId = slim.body.presence_last_update_id as number;
    t.ok(hamletUpdateId > 0);

    const legacy = await o.post('/users/me/presence', { status: 'idle' });
    const entry = (legacy.body.presences as Json)[hamlet.email] as Json;
    t.match(entry, {
      website: { client: 'website', status: 'active', timestamp: mine.active_timestamp, pushable: false },
      aggregated: { client: 'website', status: 'active', timestamp: mine.active_timestamp },
    }, 'legacy format is keyed by email, one "website" client plus its aggregate');
    t.notOk('pushable' in (entry.aggregated as Json));
    t.match((legacy.body.presences as Json)[othello.email], { website: { status: 'idle' } });
  });

  t.test('ping_only answers without presences', async (t) => {
    const r = await h.post('/users/me/presence', { status: 'active', ping_only: true });
    t.equal(r.body.result, 'success');
    t.notOk('presences' in r.body);
    t.notOk('server_timestamp' in r.body);
    // Now online, the next pings are steady ones, answered by the gateway from the store.
    const steady = await h.post('/users/me/presence', { status: 'active', ping_only: true });
    t.same(steady.body, { result: 'success', msg: '' });
    t.match(steady.headers.get('content-type'), /^application\/json/);
    const extra = await h.post('/users/me/presence', { status: 'active', ping_only: true, bogus: 1 });
    t.same(extra.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['bogus'] }, 'unknown parameters reported on a steady ping too');
  });

  t.test('last_update_id returns only what changed since', async (t) => {
    const all = await h.post('/users/me/presence', { status: 'active', last_update_id: -1 });
    const newest = all.body.presence_last_update_id as number;
    t.ok(newest >= hamletUpdateId);
    t.ok(Object.keys(all.body.presences as Json).includes(String(othello.user_id)), 'modern format with last_update_id');
    const none = await h.post('/users/me/presence', { status: 'active', last_update_id: newest });
    t.same(none.body.presences, {}, 'nothing new');
    t.equal(none.body.presence_last_update_id, newest);
    await sys.client(iago).post('/users/me/presence', { status: 'active' });
    const delta = await h.post('/users/me/presence', { status: 'active', last_update_id: newest });
    t.same(Object.keys(delta.body.presences as Json), [String(iago.user_id)]);
    t.ok((delta.body.presence_last_update_id as number) > newest);
  });

  t.test('GET /realm/presence and GET /users/{user_id_or_email}/presence', async (t) => {
    const realm = await o.get('/realm/presence');
    t.equal(realm.status, 200);
    t.match((realm.body.presences as Json)[hamlet.email], { website: { status: 'active' } });
    const byId = await o.get(`/users/${hamlet.user_id}/presence`);
    t.equal(byId.status, 200, JSON.stringify(byId.body));
    t.same(Object.keys(byId.body.presence as Json).sort(), ['aggregated', 'website']);
    t.match(byId.body.presence, { website: { status: 'active', timestamp: Number }, aggregated: { status: 'active', timestamp: Number } });
    t.notOk('client' in ((byId.body.presence as Json).website as Json));
    const byEmail = await o.get(`/users/${encodeURIComponent(hamlet.email)}/presence`);
    t.same(byEmail.body.presence, byId.body.presence);
  });

  t.test('presence errors for unknown users and bots', async (t) => {
    for (const who of ['999999', 'nobody@zulip.test', '123456789012345678901234567890']) {
      const r = await o.get(`/users/${who}/presence`);
      t.equal(r.status, 400, who);
      // An id past 2^53 is refused by the parameter layer before any lookup.
      t.match(r.body, { code: 'BAD_REQUEST', msg: who.length > 20 ? 'who is too large' : 'No such user' }, who);
    }
    const b = await o.get(`/users/${bot.user_id}/presence`);
    t.match(b.body, { code: 'BAD_REQUEST', msg: 'Presence is not supported for bot users.' });
  });

  t.test('bots may ping but have no presence', async (t) => {
    const r = await sys.client(bot).post('/users/me/presence', { status: 'active', slim_presence: true });
    t.equal(r.body.result, 'success');
    t.notOk(String(bot.user_id) in (r.body.presences as Json));
  });

  t.test('/register carries presences in the format asked for', async (t) => {
    const slim = await h.post('/register', { fetch_event_types: ['presence'], event_types: ['presence'], slim_presence: true });
    t.match((slim.body.presences as Json)[String(hamlet.user_id)], { active_timestamp: Number, idle_timestamp: Number });
    t.type(slim.body.server_timestamp, 'number');
    t.type(slim.body.presence_last_update_id, 'number');
    const legacy = await h.post('/register', { fetch_event_types: ['presence'], event_types: ['presence'] });
    t.match((legacy.body.presences as Json)[hamlet.email], { website: { client: 'website' }, aggregated: {} });
    await h.delete('/events', { queue_id: slim.body.queue_id as string });
    await h.delete('/events', { queue_id: legacy.body.queue_id as string });
  });

  t.test('a user coming online is announced to the realm, and only then', async (t) => {
    const { poller } = await QueuePoller.register(o, { event_types: ['presence'] });
    await sys.client(polonius).post('/users/me/presence', { status: 'active', ping_only: true });
    const [event] = await poller.collect(1);
    t.match(event, { type: 'presence', user_id: polonius.user_id, email: polonius.email, presence: { website: { client: 'website', status: 'active', pushable: false } } });
    t.ok(Value.Check(PresenceEvent, event), 'matches the presence event schema');
    await sys.client(polonius).post('/users/me/presence', { status: 'active', ping_only: true });
    await sys.flushOutboxes();
    await new Promise((r) => setTimeout(r, 300));
    t.same(await poller.drain(), [], 'a ping of someone already online sends nothing');
  });

  t.test('a fetch answered from the gateway’s copy lists what was answered before it, in both formats', async (t) => {
    const slim = async () => (await o.post('/users/me/presence', { status: 'active', slim_presence: true })).body.presences as Json;
    const legacy = async () => (await o.post('/users/me/presence', { status: 'active' })).body.presences as Json;
    // Both answers are made and kept for the copy as it is now.
    t.notOk((await slim())[String(desdemona.user_id)], 'not online yet');
    t.notOk((await legacy())[desdemona.email]);
    t.notOk((await slim())[String(desdemona.user_id)], 'asked again: the same answer');
    t.equal((await sys.client(desdemona).post('/users/me/presence', { status: 'idle', ping_only: true })).status, 200);
    t.match((await slim())[String(desdemona.user_id)], { idle_timestamp: Number }, 'a ping answered before the fetch is in it');
    t.match((await legacy())[desdemona.email], { website: { status: 'idle' } }, 'in the legacy format too');
    t.match((await o.get('/realm/presence')).body.presences, { [desdemona.email]: { website: { status: 'idle' } } });
  });

  t.test('presence_enabled=false through PATCH /settings hides the user at once, and true shows them again', async (t) => {
    await h.post('/users/me/presence', { status: 'active', new_user_input: true });
    t.ok(((await o.get('/realm/presence')).body.presences as Json)[hamlet.email], 'online before');
    t.equal((await h.patch('/settings', { presence_enabled: false })).status, 200);
    t.notOk(((await o.get('/realm/presence')).body.presences as Json)[hamlet.email], 'hidden right after the change');
    await h.post('/users/me/presence', { status: 'active', new_user_input: true });
    t.notOk(((await o.get('/realm/presence')).body.presences as Json)[hamlet.email], 'pings do not bring a hidden user back');
    t.equal((await h.patch('/settings', { presence_enabled: true })).status, 200);
    t.ok(((await o.get('/realm/presence')).body.presences as Json)[hamlet.email], 'shown again');
  });

  t.test('GET /realm/presence: the fast lane (plain query) answers as the Fastify route (the same query escaped) does', async (t) => {
    const raw = async (query: string) => {
      const res = await fetch(`${o.baseUrl}/api/v1/realm/presence${query}`, { headers: o.headers() });
      return { status: res.status, body: (await res.json()) as Json };
    };
    await o.get('/realm/presence'); // the key cached, the realm's copy held
    for (const [plain, escaped] of [['?slim_presence=true', '?slim_presence=%74rue'], ['', '?slim_presence=%66alse'], ['?last_update_id=-1&slim_presence=true', '?last_update_id=%2D1&slim_presence=true']] as const) {
      const [lane, route] = [await raw(plain), await raw(escaped)];
      t.equal(lane.status, 200, `lane ${plain}`);
      t.equal(route.status, 200, `route ${escaped}`);
      for (const a of [lane.body, route.body]) delete a.server_timestamp;
      t.same(lane.body, route.body, `same answer: ${plain || '(no query)'}`);
    }
    const bad = await raw('?slim_presence=perhaps');
    t.equal(bad.status, 400, 'a bad value in the plain form is the route\'s to refuse');
    t.match(bad.body, { result: 'error', code: 'BAD_REQUEST', msg: /slim_presence/ });
    const unknown = await raw('?slim_presence=true&colour=blue');
    t.equal(unknown.status, 200);
    t.same(unknown.body.ignored_parameters_unsupported, ['colour'], 'an unknown parameter is reported as Fastify reports it');
  });

  t.test('POST /users/me/presence: the fast lane (plain form) answers as the Fastify route (the same form escaped) does', async (t) => {
    const raw = async (body: string) => {
      const res = await fetch(`${o.baseUrl}/api/v1/users/me/presence`, { method: 'POST', headers: o.headers({ 'content-type': 'application/x-www-form-urlencoded' }), body });
      return { status: res.status, headers: Object.fromEntries(res.headers), body: (await res.json()) as Json };
    };
    const forms = [
      ['status=active&ping_only=true', 'status=%61ctive&ping_only=true'],
      ['status=active&slim_presence=true', 'status=%61ctive&slim_presence=true'],
      ['status=active', 'status=%61ctive'],
      ['status=idle&new_user_input=false&last_update_id=-1&slim_presence=true', 'status=%69dle&new_user_input=false&last_update_id=-1&slim_presence=true'],
      ['status=idle&history_limit_days=0', 'status=%69dle&history_limit_days=0'],
    ] as const;
    for (const [plain, escaped] of forms) {
      await raw(plain); // the key cached, the realm's copy held, this status already stored
      const [lane, route] = [await raw(plain), await raw(escaped)];
      t.equal(lane.status, 200, `lane ${plain}`);
      t.equal(route.status, 200, `route ${escaped}`);
      for (const a of [lane, route]) {
        delete a.body.server_timestamp;
        delete a.headers.date;
        delete a.headers['content-length']; // server_timestamp's digits
      }
      t.same(lane.body, route.body, `same answer: ${plain}`);
      t.same(lane.headers, route.headers, `same headers: ${plain}`);
    }
    // Read by the lane, then the route's to refuse or report: it parses the bytes the lane read.
    const bad = await raw('status=sleepy&ping_only=true');
    t.equal(bad.status, 400);
    t.same(bad.body, { result: 'error', msg: 'Invalid status: sleepy', code: 'BAD_REQUEST' });
    const notBool = await raw('status=active&ping_only=perhaps');
    t.match(notBool.body, { result: 'error', code: 'BAD_REQUEST', msg: /ping_only/ });
    const missing = await raw('ping_only=true');
    t.match(missing.body, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'status' argument" });
    const unknown = await raw('status=active&ping_only=true&colour=blue');
    t.equal(unknown.status, 200);
    t.same(unknown.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['colour'] }, 'an unknown parameter is reported as Fastify reports it');
    const twice = await raw('status=sleepy&status=active&ping_only=true');
    t.equal(twice.status, 200, 'a name given twice: the last value, as Django takes it');
    t.same(twice.body, { result: 'success', msg: '' });
  });

  t.test('POST /users/me/presence in the fast lane: a ping the users service must take (coming online) is handed to the route', async (t) => {
    const newcomer = await sys.createUser({ email: 'lane-newcomer@zulip.test', full_name: 'Lane Newcomer' });
    const reader = await sys.createUser({ email: 'lane-reader@zulip.test', full_name: 'Lane Reader' });
    for (const who of [newcomer, reader]) t.equal((await sys.client(who).get('/users/me')).status, 200, 'key cached');
    const online = await sys.client(newcomer).post('/users/me/presence', { status: 'active', ping_only: true });
    t.same(online.body, { result: 'success', msg: '' });
    const fetched = await sys.client(reader).post('/users/me/presence', { status: 'idle', slim_presence: true });
    t.equal(fetched.status, 200);
    const presences = fetched.body.presences as Json;
    t.match(presences[String(newcomer.user_id)], { active_timestamp: Number }, 'the ping-only newcomer came online');
    t.match(presences[String(reader.user_id)], { idle_timestamp: Number }, 'the fetching newcomer came online and is in its own answer');
  });


  t.test('GET /realm/presence with a cached key: the read’s own script compares its credential tokens', async (t) => {
    const quiet = await sys.createUser({ email: 'quiet-leaver@zulip.test', full_name: 'Quiet Leaver' });
    const q = sys.client(quiet);
    for (const fetch of [{ slim_presence: 'true' }, {}]) t.equal((await q.get('/realm/presence', fetch)).status, 200, 'key cached, realm copy held');
    // Deactivated with nothing the gateway hears (as if the event were lost): only the moved token can tell it.
    const users = sys.services.get('users')![0]!.ctx;
    await users.pool.query('UPDATE users.user_profile SET is_active = false WHERE id = $1', [quiet.user_id]);
    await users.redis.set(credentialTokenKey(users.config.redisPrefix, 'user', quiet.user_id), 'moved');
    for (const fetch of [{ slim_presence: 'true' }, {}]) {
      const r = await q.get('/realm/presence', fetch);
      t.equal(r.status, 401, `refused: ${JSON.stringify(fetch)}`);
      t.match(r.body, { result: 'error', code: 'USER_DEACTIVATED' });
    }
  });

  t.test('the gateway stores steady pings itself; a deactivated user pings no more', async (t) => {
    const leaver = await sys.createUser({ email: 'leaver@zulip.test', full_name: 'Leaver' });
    const l = sys.client(leaver);
    t.equal((await l.post('/users/me/presence', { status: 'active', ping_only: true })).status, 200, 'comes online (the users service)');
    const first = ((await o.post('/users/me/presence', { status: 'idle', slim_presence: true })).body.presences as Json)[String(leaver.user_id)] as Json;
    t.ok(first, 'listed');
    t.equal((await l.post('/users/me/presence', { status: 'idle', ping_only: true })).status, 200, 'a steady ping (the gateway, from its key cache)');
    t.equal((await sys.client(iago).delete(`/users/${leaver.user_id}`)).status, 200);
    const refused = await l.post('/users/me/presence', { status: 'active', ping_only: true });
    t.equal(refused.status, 401, 'the cached key is re-checked and refused');
    t.match(refused.body, { result: 'error', code: 'USER_DEACTIVATED' });
    const after = (await o.get('/realm/presence', { slim_presence: true })).body.presences as Json;
    t.notOk(after[String(leaver.user_id)], 'gone from the modern answer the gateway builds');
    for (const fetch of [{ slim_presence: true }, {}]) {
      const refusedFetch = await l.post('/users/me/presence', { status: 'active', ...fetch });
      t.equal(refusedFetch.status, 401, 'a fetch (ping and read in one script) is refused too');
      t.match(refusedFetch.body, { result: 'error', code: 'USER_DEACTIVATED' });
      t.notOk('presences' in refusedFetch.body);
    }
  });
});

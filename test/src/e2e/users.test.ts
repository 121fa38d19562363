import t from 'tap';
import { startSystem } from '../harness.js';

t.test('users and authentication through the gateway', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, iago, desdemona, bot } = sys.people;

  t.test('GET /users/me returns the caller', async (t) => {
    const r = await sys.client(hamlet).get('/users/me');
    t.equal(r.status, 200);
    t.match(r.body, { result: 'success', msg: '', user_id: hamlet.user_id, email: hamlet.email, full_name: 'King Hamlet', role: 400, is_admin: false, is_bot: false });
    t.equal(r.headers.get('cache-control'), 'private, no-store');
  });

  t.test('GET /users lists every member, bots with their owner', async (t) => {
    const r = await sys.client(hamlet).get('/users');
    t.equal(r.status, 200);
    const members = r.body.members as Array<Record<string, unknown>>;
    t.equal(members.length, 6);
    const b = members.find((m) => m.user_id === bot.user_id);
    t.match(b, { is_bot: true, bot_type: 1, bot_owner_id: iago.user_id });
    t.notOk('profile_data' in (b ?? {}));
    const h = members.find((m) => m.user_id === hamlet.user_id);
    t.equal(h?.avatar_url, null, 'client_gravatar defaults to true');
    const r2 = await sys.client(hamlet).get('/users', { client_gravatar: false, include_custom_profile_fields: true });
    const h2 = (r2.body.members as Array<Record<string, unknown>>).find((m) => m.user_id === hamlet.user_id);
    t.match(h2?.avatar_url, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=1$/);
    t.same(h2?.profile_data, {});
  });

  t.test('GET /users/{id} and /users/{email}', async (t) => {
    const byId = await sys.client(hamlet).get(`/users/${desdemona.user_id}`);
    t.match(byId.body, { result: 'success', user: { user_id: desdemona.user_id, role: 200, is_admin: true } });
    const byEmail = await sys.client(hamlet).get(`/users/${encodeURIComponent(desdemona.email)}`);
    t.match(byEmail.body, { result: 'success', user: { user_id: desdemona.user_id } });
    const missing = await sys.client(hamlet).get('/users/nobody@zulip.test');
    t.equal(missing.status, 400, 'as Zulip (access_user_by_email raises a JsonableError)');
    t.same(missing.body, { result: 'error', code: 'BAD_REQUEST', msg: 'No such user' });
    const unknownId = await sys.client(hamlet).get('/users/999999');
    t.equal(unknownId.status, 400);
    t.same(unknownId.body, { result: 'error', code: 'BAD_REQUEST', msg: 'No such user' });
  });

  t.test('POST /users needs an administrator holding can_create_users', async (t) => {
    const denied = await sys.client(desdemona).post('/users', { email: 'new@zulip.test', password: 'pw12345678', full_name: 'New' });
    t.equal(denied.status, 400);
    t.match(denied.body, { result: 'error', code: 'BAD_REQUEST' });
    const ok = await sys.client(iago).post('/users', { email: 'new@zulip.test', password: 'pw12345678', full_name: 'New Person' });
    t.equal(ok.status, 200);
    t.type(ok.body.user_id, 'number');
    const again = await sys.client(iago).post('/users', { email: 'NEW@zulip.test', password: 'x', full_name: 'Dup' });
    t.equal(again.status, 400);
    t.same(again.body, { result: 'error', msg: 'Email is already in use.' }, 'no code, as the spec says');
    const missing = await sys.client(iago).post('/users', { email: 'x@zulip.test', full_name: 'X' });
    t.same(missing.body, { result: 'error', msg: "Missing 'password' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
    // A new account's name follows the same rules as a changed one (lib/full-name.ts).
    for (const [full_name, msg] of [['X', 'Name too short!'], ['Yorick|12', 'Invalid format!'], ['Yo*rick', 'Invalid characters in name!'], ['y'.repeat(101), 'Name too long!']]) {
      const r = await sys.client(iago).post('/users', { email: 'yorick@zulip.test', password: 'pw12345678', full_name });
      t.equal(r.status, 400, msg);
      t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
    }
  });

  t.test('authentication failures', async (t) => {
    const none = await sys.anonymous().get('/users/me');
    t.equal(none.status, 401);
    t.same(none.body, { result: 'error', msg: 'Not logged in: API authentication or user session required' });
    t.match(none.headers.get('www-authenticate'), /^Basic/);
    const wrong = await sys.client({ ...hamlet, api_key: 'a'.repeat(32) }).get('/users/me');
    t.equal(wrong.status, 401);
    t.match(wrong.body, { code: 'INVALID_API_KEY', msg: 'Invalid API key' });
    const malformed = await sys.client({ ...hamlet, api_key: 'short' }).get('/users/me');
    t.equal(malformed.status, 401);
    t.match(malformed.body, { code: 'INVALID_API_KEY', msg: 'Malformed API key' });
    const otherEmail = await sys.client({ ...hamlet, email: 'othello@zulip.test' }).get('/users/me');
    t.equal(otherEmail.status, 401);
    const garbled = await fetch(`${sys.baseUrl}/api/v1/users/me`, { headers: { authorization: 'Basic !!!' } });
    t.equal(garbled.status, 401);
    t.match(await garbled.json(), { result: 'error', code: 'BAD_REQUEST' });
  });

  t.test('unknown endpoints answer 404 in the envelope', async (t) => {
    const r = await sys.client(hamlet).get('/no/such/thing');
    t.equal(r.status, 404);
    t.match(r.body, { result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' });
  });

  t.test('server_settings carries version aliases and realm fields', async (t) => {
    const r = await sys.anonymous().get('/server_settings');
    t.equal(r.status, 200);
    t.match(r.body, {
      result: 'success',
      zulip_feature_level: Number,
      zulip_version: String,
      zulip_merge_base: String,
      service_feature_level: Number,
      realm_name: 'Elsinore',
      realm_uri: String,
      realm_url: String,
      authentication_methods: { password: true, ldap: false },
      external_authentication_methods: [],
      push_notifications_enabled: false,
      is_incompatible: false,
      email_auth_enabled: true,
      require_email_format_usernames: true,
      realm_web_public_access_enabled: false,
    });
    t.equal(r.body.realm_uri, r.body.realm_url);
    const other = await sys.anonymous({ host: 'nosuch.localhost' }).get('/server_settings');
    t.equal(other.status, 200);
    t.notOk('realm_name' in other.body, 'an unknown realm host omits realm fields');
    const bad = await sys.anonymous().call('GET', '/server_settings', {}, { headers: { 'user-agent': 'ZulipInvalid/1.0' } });
    t.equal(bad.body.is_incompatible, true);
  });

  t.test('fetch_api_key', async (t) => {
    const ok = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password }, { encoding: 'multipart' });
    t.equal(ok.status, 200);
    t.match(ok.body, { result: 'success', api_key: hamlet.api_key, email: hamlet.email, user_id: hamlet.user_id });
    const wrong = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: 'nope' });
    t.equal(wrong.status, 401);
    t.match(wrong.body, { result: 'error', msg: 'Your username or password is incorrect' });
    const missing = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', var_name: 'password' });
  });

  t.test('repeated login failures for one username are throttled', async (t) => {
    const { othello } = sys.people;
    for (let i = 0; i < 5; i++) {
      const r = await sys.anonymous().post('/fetch_api_key', { username: othello.email, password: 'wrong' });
      t.equal(r.status, 401);
    }
    const blocked = await sys.anonymous().post('/fetch_api_key', { username: othello.email, password: othello.password });
    t.equal(blocked.status, 429);
    t.match(blocked.body, { result: 'error', code: 'RATE_LIMIT_HIT' });
    t.ok(blocked.headers.get('retry-after'));
  });
});

/** Polls until `check` holds: cached credentials are dropped when the users service's event arrives. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

t.test('deactivating users and replacing API keys', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius } = sys.people;

  const member = await sys.client(hamlet).delete(`/users/${othello.user_id}`);
  t.equal(member.status, 400);
  t.match(member.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
  const ownerByAdmin = await sys.client(desdemona).delete(`/users/${iago.user_id}`);
  t.match(ownerByAdmin.body, { msg: 'Must be an organization owner' });
  const lastOwner = await sys.client(iago).delete('/users/me');
  t.match(lastOwner.body, { msg: 'Cannot deactivate the only organization owner' });
  const unknown = await sys.client(desdemona).delete('/users/999999');
  t.match(unknown.body, { result: 'error', msg: 'No such user' });
  const badId = await sys.client(desdemona).delete('/users/abc');
  t.equal(badId.status, 400);

  const ok = await sys.client(desdemona).delete(`/users/${othello.user_id}`);
  t.equal(ok.status, 200);
  const after = await sys.client(othello).get('/users/me');
  t.equal(after.status, 401);
  t.same(after.body, { result: 'error', msg: 'Account is deactivated', code: 'USER_DEACTIVATED' });
  const listed = await sys.client(hamlet).get(`/users/${othello.user_id}`);
  t.match(listed.body, { user: { user_id: othello.user_id, is_active: false } });

  const self = await sys.client(polonius).delete('/users/me');
  t.equal(self.status, 200);
  t.ok(await eventually(async () => (await sys.client(polonius).get('/users/me')).status === 401), 'a deactivated account is refused once its cached credentials are dropped');

  const regenerated = await sys.client(hamlet).post('/users/me/api_key/regenerate');
  t.equal(regenerated.status, 200);
  const newKey = regenerated.body.api_key as string;
  t.match(newKey, /^[A-Za-z0-9]{32}$/);
  t.not(newKey, hamlet.api_key);
  t.ok(await eventually(async () => (await sys.client(hamlet).get('/users/me')).status === 401), 'the old key stops working');
  const old = await sys.client(hamlet).get('/users/me');
  t.match(old.body, { code: 'INVALID_API_KEY' });
  const fresh = await sys.client({ ...hamlet, api_key: newKey }).get('/users/me');
  t.equal(fresh.status, 200);
  const fetched = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password });
  t.equal(fetched.body.api_key, newKey, 'fetch_api_key returns the new key');
});

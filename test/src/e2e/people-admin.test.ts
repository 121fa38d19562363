/**
 * People administration through the gateway: PATCH /users/{id} (name, role, profile data)
 * with Zulip's permission rules, reactivation, and the effect of both on authentication.
 */
import t from 'tap';
import { startSystem } from '../harness.js';

/** Polls until `check` holds: the gateway's cached credentials go when the users service's event arrives. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const adminRequired = { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' };
const ownerRequired = { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' };

t.test('PATCH /users/{user_id} and POST /users/{user_id}/reactivate', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius, bot } = sys.people;
  const admin = sys.client(desdemona);
  const owner = sys.client(iago);
  const nameOf = async (id: number) => ((await owner.get(`/users/${id}`)).body.user as Record<string, unknown>).full_name;
  const roleOf = async (id: number) => ((await owner.get(`/users/${id}`)).body.user as Record<string, unknown>).role;

  t.test('members, guests and bots may not change other people', async (t) => {
    for (const who of [hamlet, polonius, bot]) {
      const r = await sys.client(who).patch(`/users/${othello.user_id}`, { full_name: 'Iago the Second' });
      t.equal(r.status, 400);
      t.same(r.body, adminRequired, who.email);
      const re = await sys.client(who).post(`/users/${othello.user_id}/reactivate`);
      t.same(re.body, adminRequired);
    }
    t.equal(await nameOf(othello.user_id), 'Othello, the Moor of Venice');
  });

  t.test('an administrator renames a user; blank and unchanged names are ignored', async (t) => {
    const r = await admin.patch(`/users/${othello.user_id}`, { full_name: '  Othello  ' });
    t.same(r.body, { result: 'success', msg: '' });
    t.equal(await nameOf(othello.user_id), 'Othello');
    t.same((await admin.patch(`/users/${othello.user_id}`, { full_name: '   ' })).body, { result: 'success', msg: '' });
    t.equal(await nameOf(othello.user_id), 'Othello');
  });

  t.test('names are checked as Zulip checks them', async (t) => {
    const cases: Array<[string, string]> = [
      ['O', 'Name too short!'],
      ['x'.repeat(101), 'Name too long!'],
      ['Oth*ello', 'Invalid characters in name!'],
      ['Othello@venice', 'Invalid characters in name!'],
      ['Othello|12', 'Invalid format!'],
    ];
    for (const [name, msg] of cases) {
      const r = await admin.patch(`/users/${othello.user_id}`, { full_name: name });
      t.equal(r.status, 400);
      t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg }, name.slice(0, 20));
    }
    t.equal(await nameOf(othello.user_id), 'Othello');
  });

  t.test('bad roles and unknown users', async (t) => {
    const bad = await admin.patch(`/users/${othello.user_id}`, { role: 42 });
    t.same(bad.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid role', var_name: 'role' });
    const text = await admin.patch(`/users/${othello.user_id}`, { role: 'admin' });
    t.same(text.body, { result: 'error', code: 'BAD_REQUEST', msg: 'role is not an integer', var_name: 'role' });
    const unknown = await admin.patch('/users/999999', { role: 400 });
    t.equal(unknown.status, 400);
    t.same(unknown.body, { result: 'error', code: 'BAD_REQUEST', msg: 'No such user' });
    const badId = await admin.patch('/users/abc', { role: 400 });
    t.equal(badId.status, 400);
    const noChange = await admin.patch(`/users/${othello.user_id}`, {});
    t.same(noChange.body, { result: 'success', msg: '' });
  });

  t.test('only owners make or unmake owners; the last owner stays one', async (t) => {
    t.same((await admin.patch(`/users/${hamlet.user_id}`, { role: 100 })).body, ownerRequired);
    t.same((await admin.patch(`/users/${iago.user_id}`, { role: 400 })).body, ownerRequired);
    const last = await owner.patch(`/users/${iago.user_id}`, { role: 200 });
    t.same(last.body, { result: 'error', code: 'BAD_REQUEST', msg: 'The owner permission cannot be removed from the only organization owner.' });
    t.equal(await roleOf(iago.user_id), 100);
    // A role that does not change is no change: an administrator may send the owner's own role.
    t.same((await admin.patch(`/users/${iago.user_id}`, { role: 100 })).body, { result: 'success', msg: '' });
  });

  t.test('a role change takes effect for permissions at once', async (t) => {
    t.same((await owner.patch(`/users/${hamlet.user_id}`, { role: 200 })).body, { result: 'success', msg: '' });
    t.equal(await roleOf(hamlet.user_id), 200);
    t.ok(
      await eventually(async () => (await sys.client(hamlet).patch(`/users/${othello.user_id}`, { full_name: 'Othello of Venice' })).status === 200),
      'the new administrator administers',
    );
    t.same((await owner.patch(`/users/${hamlet.user_id}`, { role: 400 })).body, { result: 'success', msg: '' });
    t.ok(
      await eventually(async () => (await sys.client(hamlet).patch(`/users/${othello.user_id}`, { full_name: 'Othello' })).status === 400),
      'the demoted member no longer does',
    );
    const r = await sys.client(hamlet).get('/users/me');
    t.match(r.body, { role: 400, is_admin: false });
    // Another owner may then demote the first one.
    t.same((await owner.patch(`/users/${desdemona.user_id}`, { role: 100 })).body, { result: 'success', msg: '' });
    await eventually(async () => (await sys.client(desdemona).get('/users/me')).body.is_owner === true);
    t.same((await admin.patch(`/users/${iago.user_id}`, { role: 200 })).body, { result: 'success', msg: '' });
    t.equal(await roleOf(iago.user_id), 200);
    t.same((await admin.patch(`/users/${iago.user_id}`, { role: 100 })).body, { result: 'success', msg: '' });
    t.same((await owner.patch(`/users/${desdemona.user_id}`, { role: 200 })).body, { result: 'success', msg: '' }, 'back as it was');
    await eventually(async () => (await sys.client(desdemona).get('/users/me')).body.is_owner === false);
  });

  t.test('an administrator renames a bot and changes its role', async (t) => {
    t.same((await admin.patch(`/users/${bot.user_id}`, { full_name: 'Renamed bot', role: 600 })).body, { result: 'success', msg: '' });
    t.equal(await nameOf(bot.user_id), 'Renamed bot');
    t.equal(await roleOf(bot.user_id), 600);
  });

  t.test('deactivation and reactivation take effect for authentication at once', async (t) => {
    t.same((await admin.delete(`/users/${othello.user_id}`)).body, { result: 'success', msg: '' });
    t.ok(await eventually(async () => (await sys.client(othello).get('/users/me')).status === 401));
    t.match((await sys.client(othello).get('/users/me')).body, { code: 'USER_DEACTIVATED' });
    t.same((await sys.client(hamlet).post(`/users/${othello.user_id}/reactivate`)).body, adminRequired);
    t.same((await admin.post('/users/999999/reactivate')).body, { result: 'error', code: 'BAD_REQUEST', msg: 'No such user' });
    const ok = await admin.post(`/users/${othello.user_id}/reactivate`);
    t.same(ok.body, { result: 'success', msg: '' });
    t.ok(await eventually(async () => (await sys.client(othello).get('/users/me')).status === 200), 'othello is back');
    t.match((await owner.get(`/users/${othello.user_id}`)).body, { user: { is_active: true } });
    const again = await admin.post(`/users/${othello.user_id}/reactivate`);
    t.same(again.body, { result: 'error', code: 'BAD_REQUEST', msg: 'User is already active.' });
  });

  t.test('a reactivated bot whose owner left gets the reactivating administrator as owner', async (t) => {
    const helper = await sys.createUser({ email: 'helper-bot@zulip.test', full_name: 'Helper', is_bot: true });
    await sys.flushOutboxes();
    t.same((await admin.delete(`/users/${helper.user_id}`)).body, { result: 'success', msg: '' });
    t.same((await admin.post(`/users/${helper.user_id}/reactivate`)).body, { result: 'success', msg: '' });
    t.match((await owner.get(`/users/${helper.user_id}`)).body, { user: { is_active: true, bot_owner_id: iago.user_id } }, 'an active owner keeps the bot');
    // Iago (the bot's owner) leaves; another owner must exist first.
    t.same((await owner.patch(`/users/${desdemona.user_id}`, { role: 100 })).body, { result: 'success', msg: '' });
    t.same((await sys.client(iago).delete('/users/me')).body, { result: 'success', msg: '' });
    t.same((await admin.delete(`/users/${helper.user_id}`)).body, { result: 'success', msg: '' });
    t.same((await admin.post(`/users/${helper.user_id}/reactivate`)).body, { result: 'success', msg: '' });
    t.match((await admin.get(`/users/${helper.user_id}`)).body, { user: { is_active: true, bot_owner_id: desdemona.user_id } });
  });
});

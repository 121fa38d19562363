/** doDeactivateUser and doRegenerateApiKey: the database change and the events they announce. */
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { UserRecord } from '@zc/shared/contracts';
import { doDeactivateUser, doRegenerateApiKey } from '../../src/actions/account-state.js';
import { authenticate } from '../../src/actions/auth.js';
import { doCreateRealm, doCreateUser } from '../../src/actions/users.js';
import { userStore } from '../../src/store/user-store.js';
import { usersTestDb } from '../fixtures/users-db.js';

t.test('account state actions', async (t) => {
  const db = await usersTestDb(t);
  const { deps, pool } = db;
  const { realm, owner } = await doCreateRealm(deps, { name: 'Elsinore', subdomain: '', owner: { email: 'iago@zulip.test', password: 'pw-iago-123', full_name: 'Iago' } });
  const hamlet = await doCreateUser(deps, realm, { email: 'hamlet@zulip.test', password: 'pw-hamlet-1', full_name: 'King Hamlet' });
  const othello = await doCreateUser(deps, realm, { email: 'othello@zulip.test', password: 'pw-othello', full_name: 'Othello' });
  const outboxLength = async () => (await db.outbox()).length;
  const login = async (email: string, api_key: string) => (await authenticate(deps, { realm_subdomain: '', email, api_key })).actor;

  t.test('doRegenerateApiKey replaces the key and announces api_key.changed', async (t) => {
    const before = await outboxLength();
    const newKey = await doRegenerateApiKey(deps, realm.id, hamlet.user.id);
    t.match(newKey, /^[A-Za-z0-9]{32}$/);
    t.not(newKey, hamlet.apiKey);
    await t.rejects(login('hamlet@zulip.test', hamlet.apiKey), { code: 'INVALID_API_KEY', httpStatus: 401, message: 'Invalid API key' }, 'the old key is dead');
    t.match(await login('hamlet@zulip.test', newKey), { user_id: hamlet.user.id });
    const row = await userStore.findById(pool, realm.id, hamlet.user.id);
    t.equal(deps.vault.decrypt(row?.api_key_enc as Buffer), newKey, 'fetch_api_key will hand out the new key');
    const events = (await db.outbox()).slice(before);
    t.same(events, [{ subject: 'users.evt.v1.api_key.changed', payload: { realm_id: realm.id, user_id: hamlet.user.id } }]);
  });

  t.test('doRegenerateApiKey for an unknown user changes nothing', async (t) => {
    const before = await outboxLength();
    await t.rejects(doRegenerateApiKey(deps, realm.id, 999_999), { code: 'BAD_REQUEST', message: 'No such user' });
    await t.rejects(doRegenerateApiKey(deps, realm.id + 1, hamlet.user.id), { code: 'BAD_REQUEST', message: 'No such user' }, 'nor one of another realm');
    t.equal(await outboxLength(), before);
  });

  t.test('doDeactivateUser deactivates, tells read models and the realm', async (t) => {
    const before = await outboxLength();
    t.equal(await doDeactivateUser(deps, realm.id, othello.user.id), true);
    t.equal((await userStore.findById(pool, realm.id, othello.user.id))?.is_active, false);
    await t.rejects(login('othello@zulip.test', othello.apiKey), { code: 'USER_DEACTIVATED', httpStatus: 401, message: 'Account is deactivated' });
    const events = (await db.outbox()).slice(before);
    t.equal(events.length, 2);
    const [updated, notify] = events;
    t.equal(updated?.subject, 'users.evt.v1.user.updated');
    t.ok(Value.Check(UserRecord, updated?.payload), 'the payload is a UserRecord');
    t.match(updated?.payload, { user_id: othello.user.id, is_active: false, email: 'othello@zulip.test' });
    t.equal(notify?.subject, 'events.inbox.v1.notify');
    t.same(notify?.payload.event, { type: 'realm_user', op: 'remove', person: { user_id: othello.user.id, full_name: othello.user.full_name } });
    const recipients = notify?.payload.users as number[];
    t.same([...recipients].sort((a, b) => a - b), [owner.id, hamlet.user.id].sort((a, b) => a - b), 'every active user, not the deactivated one');
  });

  t.test('deactivating twice is a no-op; an unknown user is an error', async (t) => {
    const before = await outboxLength();
    t.equal(await doDeactivateUser(deps, realm.id, othello.user.id), false);
    await t.rejects(doDeactivateUser(deps, realm.id, 999_999), { code: 'BAD_REQUEST', message: 'No such user' });
    t.equal(await outboxLength(), before, 'nothing announced');
  });
});

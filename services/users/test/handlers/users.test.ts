/**
 * The users service's bus handlers over real NATS, with the service started as in production
 * (startService: migrations, queue group, outbox relay): replies, AppError replies, and
 * requests that do not match their contract.
 */
import t from 'tap';
import { Bus } from '@zc/shared/bus';
import { loadConfig } from '@zc/shared/config';
import { users, type Actor } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { startService } from '@zc/shared/service';
import { testEnv } from '@zc/shared/testing';
import { doCreateRealm, doCreateUser } from '../../src/actions/users.js';
import { makeDeps } from '../../src/deps.js';
import { usersService } from '../../src/service.js';

t.test('users handlers over NATS', async (t) => {
  const env = await testEnv(t);
  const log = createLogger({ service: 'users-test', level: 'silent' });
  const running = await startService(usersService, { config: env.config, log, admin: false });
  t.teardown(() => running.stop());
  const config = loadConfig(env.config);
  const pool = createPool(env.databaseUrl, { max: 2 });
  t.teardown(() => pool.end());
  const created = await doCreateRealm(makeDeps({ pool, config, log }), {
    name: 'Elsinore',
    subdomain: '',
    owner: { email: 'iago@zulip.test', password: 'pw-iago-123', full_name: 'Iago' },
  });
  const bus = await Bus.connect({ url: config.natsUrl, prefix: config.subjectPrefix, name: 'users-handler-test', log });
  t.teardown(() => bus.close());

  let actor: Actor;
  t.test('a good request gets its reply', async (t) => {
    const r = await bus.request(users.authenticate, { realm_subdomain: '', email: 'iago@zulip.test', api_key: created.apiKey });
    t.match(r, { actor: { realm_id: created.realm.id, user_id: created.owner.id, role: 100, email: 'iago@zulip.test', is_bot: false }, realm_deactivated: false });
    actor = r.actor;
    const me = await bus.request(users.me, { actor });
    t.match(me, { user_id: created.owner.id, is_owner: true });
  });

  t.test('an AppError thrown by the action comes back as the same AppError', async (t) => {
    await t.rejects(bus.request(users.get, { actor, user_id: 999_999, client_gravatar: true, include_custom_profile_fields: false }), {
      name: 'AppError',
      code: 'BAD_REQUEST',
      httpStatus: 400,
      message: 'No such user',
    });
    await t.rejects(bus.request(users.authenticate, { realm_subdomain: '', email: 'iago@zulip.test', api_key: 'Z'.repeat(32) }), {
      code: 'INVALID_API_KEY',
      httpStatus: 401,
      message: 'Invalid API key',
    });
    await t.rejects(bus.request(users.fetchApiKey, { realm_subdomain: '', username: 'iago@zulip.test', password: 'wrong' }), {
      code: 'BAD_REQUEST',
      httpStatus: 401,
      message: 'Your username or password is incorrect',
    });
  });

  t.test('a payload that breaks the contract is BAD_REQUEST, and the service keeps serving', async (t) => {
    const malformed = { code: 'BAD_REQUEST', httpStatus: 400, message: 'Malformed internal request' };
    await t.rejects(bus.request(users.me, {} as never), malformed, 'no actor');
    await t.rejects(bus.request(users.me, { actor: { ...actor, user_id: 'one' } } as never), malformed, 'wrong type');
    await t.rejects(bus.request(users.get, { actor } as never), malformed, 'required view options missing');
    // Bytes that are not JSON at all, straight on the subject.
    const reply = await bus.nc.request(bus.subject(users.me.subject), new TextEncoder().encode('{not json'), { timeout: 5000 });
    t.same(JSON.parse(new TextDecoder().decode(reply.data)), { err: { code: 'BAD_REQUEST', msg: 'Malformed internal request', status: 400, data: {} } });
    t.match(await bus.request(users.me, { actor }), { user_id: created.owner.id }, 'still serving');
  });

  t.test('permissions are decided on the role the users table holds, not the one the request carries', async (t) => {
    // The gateway's credential cache may still say "administrator" for an owner who was
    // demoted and promoted again a moment ago.
    const stale = { ...actor, role: 200 };
    const { user } = await doCreateUser(makeDeps({ pool, config, log }), created.realm, {
      email: 'horatio@zulip.test', password: 'pw-horatio-1', full_name: 'Horatio', role: 400, is_bot: false, bot_owner_id: null,
    });
    const made = { user_id: user.id };
    t.same(await bus.request(users.updateUser, { actor: stale, user_id: made.user_id, role: 100 }), {}, 'only an owner makes an owner');
    // And the other way round: a demoted owner's cached role grants nothing.
    t.same(await bus.request(users.updateUser, { actor, user_id: made.user_id, role: 400 }), {});
    const horatio = { ...actor, user_id: made.user_id, email: 'horatio@zulip.test', full_name: 'Horatio', role: 100 };
    await t.rejects(bus.request(users.updateUser, { actor: horatio, user_id: created.owner.id, role: 200 }), {
      code: 'UNAUTHORIZED_PRINCIPAL',
      message: 'Must be an organization administrator',
    });
    t.same(await bus.request(users.deactivate, { actor, user_id: made.user_id }), {});
    await t.rejects(bus.request(users.me, { actor: horatio }), { code: 'USER_DEACTIVATED', httpStatus: 401, message: 'Account is deactivated' });
  });
});

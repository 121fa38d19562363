/** The users and realms stores against a real PostgreSQL database of this file's own. */
import t from 'tap';
import { isUniqueViolation } from '@zc/shared/db';
import { realmStore } from '../../src/store/realm-store.js';
import { userStore, type NewUser } from '../../src/store/user-store.js';
import { uniqueEmail, usersTestDb } from '../fixtures/users-db.js';

t.test('realm and user stores', async (t) => {
  const { pool, deps } = await usersTestDb(t);
  const realm = await realmStore.insert(pool, { subdomain: 'elsinore', name: 'Elsinore', settings: { waiting_period_threshold: 3 } });
  const other = await realmStore.insert(pool, { subdomain: 'verona', name: 'Verona' });

  const newUser = (o: Partial<NewUser> = {}): NewUser => {
    const key = `key-${Math.random()}`;
    return {
      realm_id: realm.id,
      delivery_email: uniqueEmail('u'),
      full_name: 'Somebody',
      role: 400,
      is_bot: false,
      bot_type: null,
      bot_owner_id: null,
      password_hash: null,
      api_key_hash: deps.vault.lookupHash(key),
      api_key_enc: deps.vault.encrypt(key),
      can_create_users: false,
      ...o,
    };
  };

  t.test('realms: insert with defaults, find by id and subdomain', async (t) => {
    t.match(realm, { subdomain: 'elsinore', name: 'Elsinore', description: '', deactivated: false, email_address_visibility: 1, settings: { waiting_period_threshold: 3 } });
    t.type(realm.id, 'number', 'bigint ids come back as numbers');
    t.ok(realm.date_created instanceof Date);
    t.same(await realmStore.findById(pool, realm.id), realm);
    t.same(await realmStore.findBySubdomain(pool, 'verona'), other);
    t.equal(await realmStore.findBySubdomain(pool, 'nowhere'), undefined);
    t.equal(await realmStore.findById(pool, 999_999), undefined);
    await t.rejects(realmStore.insert(pool, { subdomain: 'elsinore', name: 'Again' }), 'subdomains are unique');
  });

  t.test('users: insert and every finder', async (t) => {
    const key = 'A'.repeat(32);
    const u = await userStore.insert(pool, newUser({ delivery_email: 'Hamlet@Zulip.test', api_key_hash: deps.vault.lookupHash(key), api_key_enc: deps.vault.encrypt(key), timezone: 'UTC' }));
    t.match(u, { realm_id: realm.id, delivery_email: 'Hamlet@Zulip.test', role: 400, is_active: true, avatar_source: 'G', avatar_version: 1, timezone: 'UTC', is_system_bot: false });
    t.type(u.id, 'number');
    t.same(await userStore.findById(pool, realm.id, u.id), u);
    t.equal(await userStore.findById(pool, other.id, u.id), undefined, 'ids are looked up within the realm');
    t.same(await userStore.findByDeliveryEmail(pool, realm.id, 'hamlet@ZULIP.test'), u, 'emails match case-insensitively');
    t.equal(await userStore.findByDeliveryEmail(pool, other.id, 'hamlet@zulip.test'), undefined);
    t.same(await userStore.findByApiKeyHash(pool, deps.vault.lookupHash(key)), u);
    t.equal(await userStore.findByApiKeyHash(pool, deps.vault.lookupHash('B'.repeat(32))), undefined);
    t.equal(deps.vault.decrypt(u.api_key_enc), key, 'the encrypted copy reads back');
  });

  t.test('one address per realm, whatever its case; other realms may reuse it', async (t) => {
    const email = uniqueEmail('dup');
    await userStore.insert(pool, newUser({ delivery_email: email }));
    const err = await userStore.insert(pool, newUser({ delivery_email: email.toUpperCase() })).catch((e: unknown) => e);
    t.ok(isUniqueViolation(err), 'a unique violation the action maps to "Email is already in use."');
    const elsewhere = await userStore.insert(pool, newUser({ realm_id: other.id, delivery_email: email }));
    t.equal(elsewhere.realm_id, other.id);
  });

  t.test('API key hashes are unique', async (t) => {
    const hash = deps.vault.lookupHash('C'.repeat(32));
    await userStore.insert(pool, newUser({ api_key_hash: hash }));
    t.ok(isUniqueViolation(await userStore.insert(pool, newUser({ api_key_hash: hash })).catch((e: unknown) => e)));
  });

  t.test('lists: by realm without system bots, system bots, by ids, by emails', async (t) => {
    const bot = await userStore.insert(pool, newUser({ is_bot: true, bot_type: 1, is_system_bot: true, full_name: 'Notification Bot' }));
    const a = await userStore.insert(pool, newUser({ delivery_email: uniqueEmail('a') }));
    const b = await userStore.insert(pool, newUser({ delivery_email: uniqueEmail('b') }));
    const listed = await userStore.listByRealm(pool, realm.id);
    t.notOk(listed.some((u) => u.id === bot.id), 'system bots are not members');
    t.ok(listed.every((u) => u.realm_id === realm.id));
    t.same(listed.map((u) => u.id), [...listed.map((u) => u.id)].sort((x, y) => x - y), 'ordered by id');
    t.same((await userStore.listSystemBots(pool, realm.id)).map((u) => u.id), [bot.id]);
    t.same((await userStore.listByIds(pool, realm.id, [a.id, b.id, 999_999])).map((u) => u.id).sort(), [a.id, b.id].sort(), 'unknown ids are just absent');
    t.same(await userStore.listByIds(pool, other.id, [a.id]), [], 'not across realms');
    t.same((await userStore.listByDeliveryEmails(pool, realm.id, [a.delivery_email.toUpperCase(), 'nobody@zulip.test'])).map((u) => u.id), [a.id]);
    t.same(await userStore.listByIds(pool, realm.id, []), []);
  });

  t.test('updates: active flag, API key, can_create_users', async (t) => {
    const u = await userStore.insert(pool, newUser());
    await userStore.setActive(pool, u.id, false);
    t.equal((await userStore.findById(pool, realm.id, u.id))?.is_active, false);
    const key = 'D'.repeat(32);
    await userStore.setApiKey(pool, u.id, deps.vault.lookupHash(key), deps.vault.encrypt(key));
    t.equal((await userStore.findByApiKeyHash(pool, deps.vault.lookupHash(key)))?.id, u.id);
    await userStore.setCanCreateUsers(pool, u.id, true);
    t.equal((await userStore.findById(pool, realm.id, u.id))?.can_create_users, true);
  });

  t.test('profile values of several users at once', async (t) => {
    const u = await userStore.insert(pool, newUser());
    const { rows } = await pool.query<{ id: number }>(
      'INSERT INTO users.custom_profile_field (realm_id, name, field_type) VALUES ($1, $2, 1) RETURNING id',
      [realm.id, 'Country'],
    );
    const fieldId = Number(rows[0]?.id);
    await pool.query('INSERT INTO users.custom_profile_field_value (user_id, field_id, value) VALUES ($1, $2, $3)', [u.id, fieldId, 'Denmark']);
    t.same(await userStore.profileValues(pool, [u.id, 999_999]), new Map([[u.id, [{ user_id: u.id, field_id: fieldId, value: 'Denmark', rendered_value: null }]]]));
    t.same(await userStore.profileValues(pool, []), new Map());
  });
});

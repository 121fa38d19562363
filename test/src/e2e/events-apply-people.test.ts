/**
 * The apply-events check (see events-apply.test.ts) for people administration: names,
 * roles, custom profile fields and values, deactivation and reactivation, bots.
 */
import t from 'tap';
import type { Params } from '../client.js';
import { startSystem } from '../harness.js';
import { doAnnounceNewFullMembers } from '@zc/users/manage';
import { verifyAction } from './events-verify.js';

t.test('people administration events applied to register state equal a fresh register', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, iago, othello } = sys.people;
  const h = sys.client(hamlet);
  const base: Params = { client_gravatar: false, apply_markdown: true };

  t.test('people administration: name, role, custom profile fields and values', async (t) => {
    const params = { ...base, event_types: ['realm_user', 'custom_profile_fields'] };
    const admin = sys.client(iago);
    await verifyAction(t, sys, h, () => admin.patch(`/users/${othello.user_id}`, { full_name: 'Othello the Moor' }), { params, expect: ['realm_user/update'] });
    await verifyAction(t, sys, h, () => admin.patch(`/users/${othello.user_id}`, { role: 300 }), { params, expect: ['realm_user/update'] });
    // System groups follow roles: a role change moves the user between them.
    await verifyAction(t, sys, h, () => admin.patch(`/users/${othello.user_id}`, { role: 200 }), {
      params: { ...base, event_types: ['realm_user', 'user_group', 'realm_user_groups'] },
      expect: ['realm_user/update', 'user_group/remove_members', 'user_group/add_members'],
    });
    let phone = 0;
    await verifyAction(t, sys, h, async () => {
      phone = (await admin.post('/realm/profile_fields', { name: 'Phone', field_type: 1 })).body.id as number;
    }, { params, expect: ['custom_profile_fields'] });
    const birthday = (await admin.post('/realm/profile_fields', { name: 'Birthday', field_type: 4 })).body.id as number;
    await verifyAction(t, sys, h, () => admin.patch('/realm/profile_fields', { order: [birthday, phone] }), { params, expect: ['custom_profile_fields'] });
    await verifyAction(t, sys, h, () => admin.patch(`/realm/profile_fields/${phone}`, { name: 'Telephone', display_in_profile_summary: true }), {
      params,
      expect: ['custom_profile_fields'],
    });
    await verifyAction(t, sys, h, () => h.patch('/users/me/profile_data', { data: [{ id: phone, value: '**555**' }, { id: birthday, value: '1600-04-23' }] }), {
      params,
      expect: ['realm_user/update'],
    });
    await verifyAction(t, sys, h, () => admin.patch(`/users/${hamlet.user_id}`, { profile_data: [{ id: phone, value: null }] }), { params, expect: ['realm_user/update'] });
    await verifyAction(t, sys, h, () => h.delete('/users/me/profile_data', { data: [birthday] }), { params, expect: ['realm_user/update'] });
    await verifyAction(t, sys, h, () => admin.delete(`/realm/profile_fields/${birthday}`), { params, expect: ['custom_profile_fields'] });
  });

  t.test('deactivating and reactivating a user and a bot', async (t) => {
    const params = { ...base, event_types: ['realm_user', 'realm_bot'] };
    const admin = sys.client(iago);
    const { bot } = sys.people;
    await verifyAction(t, sys, admin, () => admin.delete(`/users/${othello.user_id}`), { params, expect: ['realm_user/remove'] });
    await verifyAction(t, sys, admin, () => admin.post(`/users/${othello.user_id}/reactivate`), { params, expect: ['realm_user/add'] });
    await verifyAction(t, sys, admin, () => admin.patch(`/users/${bot.user_id}`, { full_name: 'Yorick bot' }), { params, expect: ['realm_user/update', 'realm_bot/update'] });
    // A rename through PATCH /settings is the same action as an administrator's.
    await verifyAction(t, sys, admin, () => admin.patch('/settings', { full_name: 'Iago the Ensign' }), { params, expect: ['realm_user/update'] });
    await verifyAction(t, sys, admin, () => admin.patch(`/users/${iago.user_id}`, { full_name: 'Iago', role: 100 }), { params, expect: ['realm_user/update'] });
    await verifyAction(t, sys, admin, () => admin.delete(`/users/${bot.user_id}`), { params, expect: ['realm_user/remove', 'realm_bot/remove'] });
    await verifyAction(t, sys, admin, () => admin.post(`/users/${bot.user_id}/reactivate`), { params, expect: ['realm_user/add', 'realm_bot/add'] });
  });

  t.test("deactivating a bot's owner deactivates the bot too (Zulip's do_deactivate_user)", async (t) => {
    const params = { ...base, event_types: ['realm_user', 'realm_bot'] };
    const admin = sys.client(iago);
    const owner = await sys.createUser({ email: 'bot-owner@zulip.test', full_name: 'Bot Owner' });
    const owned = await sys.createUser({ email: 'owned-bot@zulip.test', full_name: 'Owned bot', is_bot: true });
    const gone = await sys.createUser({ email: 'gone-bot@zulip.test', full_name: 'Gone bot', is_bot: true });
    // No POST /bots yet: the harness's bots belong to iago, so these two are handed over in SQL.
    const users = sys.services.get('users')![0]!.ctx;
    await users.pool.query('UPDATE users.user_profile SET bot_owner_id = $1 WHERE id = ANY($2::bigint[])', [owner.user_id, [owned.user_id, gone.user_id]]);
    await admin.delete(`/users/${gone.user_id}`);
    const events = await verifyAction(t, sys, admin, () => admin.delete(`/users/${owner.user_id}`), { params, expect: ['realm_user/remove', 'realm_bot/remove'] });
    t.same(
      events.filter((e) => e.op === 'remove').map((e) => `${e.type}:${((e.person ?? e.bot) as { user_id: number }).user_id}`),
      [`realm_user:${owner.user_id}`, `realm_user:${owned.user_id}`, `realm_bot:${owned.user_id}`],
      'the owner, then the active bot; the bot already deactivated is left alone',
    );
    t.equal((await sys.client(owned).get('/users/me')).status, 401, "the bot's key stops working at once");
    // Reactivating the owner does not bring the bots back (Zulip neither).
    await admin.post(`/users/${owner.user_id}/reactivate`);
    t.equal((await sys.client(owned).get('/users/me')).status, 401, 'the bot stays deactivated');
    // Deactivating a bot leaves its owner alone.
    await admin.post(`/users/${owned.user_id}/reactivate`);
    await admin.delete(`/users/${owned.user_id}`);
    t.equal((await sys.client(owner).get('/users/me')).status, 200, 'the owner is still active');
  });

  t.test('role:fullmembers follows the waiting period: changed, and passed as time goes by', async (t) => {
    const params = { ...base, event_types: ['realm', 'user_group'], fetch_event_types: ['realm', 'user_group', 'realm_user_groups'] };
    const admin = sys.client(iago);
    const users = sys.services.get('users')![0]!.ctx;
    const fullMembers = async () => {
      const groups = (await admin.get('/user_groups')).body.user_groups as Array<{ name: string; members: number[] }>;
      return groups.find((g) => g.name === 'role:fullmembers')?.members ?? [];
    };
    const newcomer = await sys.createUser({ email: 'newcomer@zulip.test', full_name: 'Newcomer' });
    t.ok((await fullMembers()).includes(newcomer.user_id), 'with no waiting period every member is full');
    // Everyone joined moments ago: a waiting period of 3 days takes every member out.
    await verifyAction(t, sys, admin, () => admin.patch('/realm', { waiting_period_threshold: 3 }), { params, expect: ['realm/update', 'user_group/remove_members'] });
    t.notOk((await fullMembers()).includes(newcomer.user_id));
    // The newcomer joined 3 days and a minute ago; the last sweep was an hour ago.
    await users.pool.query("UPDATE users.user_profile SET date_joined = now() - interval '3 days 1 minute' WHERE id = $1", [newcomer.user_id]);
    await users.pool.query("UPDATE users.realm SET full_members_swept_at = now() - interval '1 hour' WHERE id = $1", [sys.realmId]);
    let swept: Record<number, number[]> = {};
    const events = await verifyAction(t, sys, admin, async () => {
      swept = await doAnnounceNewFullMembers(users);
    }, { params, expect: ['user_group/add_members'] });
    t.same(swept, { [sys.realmId]: [newcomer.user_id] }, 'only the member who passed it');
    t.match(events[0], { type: 'user_group', op: 'add_members', user_ids: [newcomer.user_id] });
    t.same(await doAnnounceNewFullMembers(users), {}, 'announced once');
    // Back to no waiting period: everyone else joins at once.
    await verifyAction(t, sys, admin, () => admin.patch('/realm', { waiting_period_threshold: 0 }), { params, expect: ['realm/update', 'user_group/add_members'] });
    t.ok((await fullMembers()).includes(hamlet.user_id));
  });
});

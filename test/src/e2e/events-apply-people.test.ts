/**
 * The apply-events check (see events-apply.test.ts) for people administration: names,
 * roles, custom profile fields and values, deactivation and reactivation, bots.
 */
import t from 'tap';
import type { Params } from '../client.js';
import { startSystem } from '../harness.js';
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
    await verifyAction(t, sys, admin, () => admin.delete(`/users/${bot.user_id}`), { params, expect: ['realm_user/remove', 'realm_bot/remove'] });
    await verifyAction(t, sys, admin, () => admin.post(`/users/${bot.user_id}/reactivate`), { params, expect: ['realm_user/add', 'realm_bot/add'] });
  });
});

/**
 * PATCH /realm/user_settings_defaults (Zulip's RealmUserDefault): administrators only, values
 * checked as PATCH /settings checks them, one update event per changed setting (apply-events
 * check), and users created afterwards start with the defaults.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import type { Params } from '../client.js';
import { verifyAction } from './events-verify.js';

type Json = Record<string, unknown>;

t.test('realm user settings defaults', async (t) => {
  const sys = await startSystem(t);
  const { desdemona, hamlet, iago } = sys.people;
  const admin = sys.client(desdemona);
  const params: Params = { client_gravatar: false, apply_markdown: true, event_types: ['realm_user_settings_defaults'], fetch_event_types: ['realm_user_settings_defaults'] };

  t.test('an administrator changes defaults; everyone gets the events', async (t) => {
    const events = await verifyAction(t, sys, sys.client(hamlet), async () => {
      const r = await admin.patch('/realm/user_settings_defaults', { emojiset: 'text', enter_sends: true, twenty_four_hour_time: true });
      t.equal(r.status, 200, JSON.stringify(r.body));
    }, { params, expect: ['realm_user_settings_defaults/update'] });
    t.same(events.map((e) => [e.property, e.value]).sort(), [['emojiset', 'text'], ['enter_sends', true], ['twenty_four_hour_time', true]]);
    const state = (await sys.client(hamlet).post('/register', { fetch_event_types: ['realm_user_settings_defaults'] })).body.realm_user_settings_defaults as Json;
    t.equal(state.emojiset, 'text');
    t.notOk('timezone' in state, 'no timezone among the defaults');
    const mine = (await sys.client(hamlet).post('/register', { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } })).body.user_settings as Json;
    t.not(mine.emojiset, 'text', "existing users' own settings do not change");
    await verifyAction(t, sys, admin, () => admin.patch('/realm/user_settings_defaults', { emojiset: 'text' }), { params, expect: [] });
  });

  t.test('new users start with the defaults', async (t) => {
    const created = await sys.client(iago).post('/users', { email: 'laertes@zulip.test', password: 'laertes-pw-123', full_name: 'Laertes' });
    t.equal(created.status, 200);
    const key = await sys.client(iago).post('/fetch_api_key', { username: 'laertes@zulip.test', password: 'laertes-pw-123' });
    const laertes = { user_id: created.body.user_id as number, email: 'laertes@zulip.test', api_key: key.body.api_key as string, full_name: 'Laertes', password: 'laertes-pw-123' };
    const settings = (await sys.client(laertes).post('/register', { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } })).body.user_settings as Json;
    t.equal(settings.emojiset, 'text');
    t.equal(settings.enter_sends, true);
    t.equal(settings.twenty_four_hour_time, true);
  });

  t.test('errors', async (t) => {
    const member = await sys.client(hamlet).patch('/realm/user_settings_defaults', { emojiset: 'google' });
    t.same([member.status, member.body.code, member.body.msg], [400, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator']);
    const badSet = await admin.patch('/realm/user_settings_defaults', { emojiset: 'nonsense' });
    t.equal(badSet.status, 400);
    t.equal(badSet.body.code, 'BAD_REQUEST');
    const badBool = await admin.patch('/realm/user_settings_defaults', { enter_sends: 'maybe' });
    t.equal(badBool.status, 400);
    const tz = await admin.patch('/realm/user_settings_defaults', { timezone: 'Europe/Copenhagen' });
    t.same(tz.body.ignored_parameters_unsupported, ['timezone'], 'timezone is not a realm default');
  });
  t.test('a new user hidden by the defaults stays out of presence', async (t) => {
    // Someone's presence is read, so the presence store has loaded who is hidden before the new user exists.
    t.equal((await sys.client(hamlet).post('/users/me/presence', { status: 'active', new_user_input: true })).status, 200);
    t.equal((await admin.patch('/realm/user_settings_defaults', { presence_enabled: false })).status, 200);
    const created = await sys.client(iago).post('/users', { email: 'ophelia@zulip.test', password: 'ophelia-pw-123', full_name: 'Ophelia' });
    t.equal(created.status, 200);
    const key = await sys.client(iago).post('/fetch_api_key', { username: 'ophelia@zulip.test', password: 'ophelia-pw-123' });
    const ophelia = { user_id: created.body.user_id as number, email: 'ophelia@zulip.test', api_key: key.body.api_key as string, full_name: 'Ophelia', password: 'ophelia-pw-123' };
    t.equal((await sys.client(ophelia).post('/users/me/presence', { status: 'active', new_user_input: true })).status, 200, 'her client pings');
    const seen = (await sys.client(hamlet).get('/realm/presence')).body.presences as Record<string, unknown>;
    t.ok(hamlet.email in seen, 'others are seen');
    t.notOk(ophelia.email in seen, 'she is not: presence_enabled is off for her from the start');
    t.equal((await sys.client(hamlet).get(`/users/${ophelia.user_id}/presence`)).status, 400, 'nor one by one');
    t.equal((await admin.patch('/realm/user_settings_defaults', { presence_enabled: true })).status, 200);
  });
});

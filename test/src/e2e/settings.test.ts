/**
 * PATCH /settings (and the legacy /settings/display, /settings/notifications) and PATCH
 * /realm: Zulip's checks and messages, what /register shows afterwards, the permission
 * rules, and the settings other services read (users.userSettings).
 */
import t from 'tap';
import { users } from '@zc/shared/contracts';
import { startSystem } from '../harness.js';
import { register } from './events-support.js';
import type { Params } from '../client.js';

t.test('settings', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'subscriptions', 'messages', 'events', 'gateway'] });
  const { iago, desdemona, hamlet, othello } = sys.people;
  const h = sys.client(hamlet);

  t.test('a change shows in /register, in both the object and the legacy keys', async (t) => {
    const r = await h.patch('/settings', { twenty_four_hour_time: true, color_scheme: 3, default_language: 'de', enable_sounds: false, pm_content_in_desktop_notifications: false });
    t.equal(r.status, 200);
    t.same(r.body, { result: 'success', msg: '' });
    const modern = await register(h, { fetch_event_types: ['user_settings'], client_capabilities: { user_settings_object: true } });
    t.match(modern.user_settings, { twenty_four_hour_time: true, color_scheme: 3, default_language: 'de', enable_sounds: false, pm_content_in_desktop_notifications: false, emojiset: 'google' });
    t.notOk('twenty_four_hour_time' in modern, 'no top-level copies with user_settings_object');
    const legacy = await register(h, { fetch_event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'] });
    t.match(legacy, { twenty_four_hour_time: true, color_scheme: 3, default_language: 'de', enable_sounds: false, pm_content_in_desktop_notifications: false });
    t.type(legacy.emojiset_choices, Array);
    t.type(legacy.available_notification_sounds, Array);
    const others = await register(sys.client(othello), { fetch_event_types: ['user_settings'] });
    t.match(others.user_settings, { twenty_four_hour_time: false, color_scheme: 1 }, 'settings are personal');
  });

  t.test('the legacy endpoints take the same settings', async (t) => {
    t.equal((await h.patch('/settings/display', { high_contrast_mode: true })).status, 200);
    t.equal((await h.patch('/settings/notifications', { enable_digest_emails: false })).status, 200);
    const bus = sys.services.get('users')?.[0]?.ctx.bus;
    if (!bus) throw new Error('users service not running');
    const { users: [me] } = await bus.request(users.userSettings, { realm_id: sys.realmId, user_ids: [hamlet.user_id, 999999] });
    t.match(me, { user_id: hamlet.user_id, settings: { high_contrast_mode: true, enable_digest_emails: false } }, 'other services read them over users.userSettings');
  });

  t.test('bad values are refused with Zulip\'s messages and change nothing', async (t) => {
    const cases: Array<[Params, string]> = [
      [{ color_scheme: 7 }, 'Invalid color_scheme'],
      [{ demote_inactive_streams: 0 }, 'Invalid demote_inactive_streams'],
      [{ desktop_icon_count_display: 9 }, 'Invalid desktop_icon_count_display'],
      [{ emojiset: 'apple' }, 'Invalid emojiset'],
      [{ default_language: 'xx' }, 'Invalid default_language'],
      [{ default_view: 'inbox' }, 'Invalid default_view'],
      [{ notification_sound: 'bang' }, "Invalid notification sound 'bang'"],
      [{ timezone: 'Mars/Olympus' }, "Invalid timezone 'Mars/Olympus'"],
      [{ email_notifications_batching_period_seconds: 0 }, 'Invalid email batching period: 0 seconds'],
      [{ enter_sends: 'maybe' }, 'Argument "enter_sends" is not valid JSON.'],
      [{ enable_sounds: 3 }, 'enable_sounds is not a boolean'],
      [{ user_list_style: 'two' }, 'user_list_style is not an integer'],
      [{ full_name: '' }, 'Name too short!'],
      [{ full_name: 'x'.repeat(101) }, 'Name too long!'],
      // The same rules as an administrator's rename (one check, one action: people-admin.ts).
      [{ full_name: ' H ' }, 'Name too short!'],
      [{ full_name: 'Hamlet|12' }, 'Invalid format!'],
      [{ full_name: 'Ham*let' }, 'Invalid characters in name!'],
    ];
    for (const [body, msg] of cases) {
      const r = await h.patch('/settings', { ...body, left_side_userlist: true });
      t.equal(r.status, 400, msg);
      t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg });
    }
    const state = await register(h, { fetch_event_types: ['user_settings'] });
    t.equal((state.user_settings as Record<string, unknown>).left_side_userlist, false, 'a refused request changes nothing');
  });

  t.test('notification_sound none and an unchanged value are accepted', async (t) => {
    t.equal((await h.patch('/settings', { notification_sound: 'none' })).status, 200);
    t.equal((await h.patch('/settings', { notification_sound: 'none' })).status, 200);
  });

  t.test('unknown parameters are reported, not refused', async (t) => {
    const r = await h.patch('/settings', { starred_message_counts: false, web_font_size_px: 16 });
    t.equal(r.status, 200);
    t.same(r.body.ignored_parameters_unsupported, ['web_font_size_px']);
  });

  t.test('full name: changed, and silently kept where the realm forbids changes', async (t) => {
    const r = await h.patch('/settings', { full_name: '  Hamlet the Dane ' });
    t.match(r.body, { result: 'success', full_name: 'Hamlet the Dane' });
    t.match((await h.get('/users/me')).body, { full_name: 'Hamlet the Dane' });
    t.equal((await sys.client(iago).patch('/realm', { name_changes_disabled: true })).status, 200);
    const refused = await h.patch('/settings', { full_name: 'Hamlet' });
    t.equal(refused.status, 200, 'Zulip ignores it: the UI does not offer it');
    t.match((await h.get('/users/me')).body, { full_name: 'Hamlet the Dane' });
    const admin = sys.client(desdemona);
    t.match((await admin.patch('/settings', { full_name: 'Desdemona of Venice' })).body, { full_name: 'Desdemona of Venice' }, 'administrators still may');
    await sys.client(iago).patch('/realm', { name_changes_disabled: false });
    await h.patch('/settings', { full_name: 'Hamlet' });
  });

  t.test('password change', async (t) => {
    const cases: Array<[Params, string]> = [
      [{ new_password: 'elsinore-123' }, 'Please fill out all fields.'],
      [{ old_password: 'nope', new_password: 'elsinore-123' }, 'Wrong password!'],
      [{ old_password: hamlet.password, new_password: 'abc' }, 'New password is too weak!'],
    ];
    for (const [body, msg] of cases) t.match((await h.patch('/settings', body)).body, { result: 'error', code: 'BAD_REQUEST', msg });
    const ok = await h.patch('/settings', { old_password: hamlet.password, new_password: 'elsinore-123' });
    t.equal(ok.status, 200);
    const fetched = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: 'elsinore-123' });
    t.equal(fetched.status, 200, 'the new password logs in');
    const old = await sys.anonymous().post('/fetch_api_key', { username: hamlet.email, password: hamlet.password });
    t.equal(old.status, 401, 'the old one no more');
    await h.patch('/settings', { old_password: 'elsinore-123', new_password: hamlet.password });
  });
});

t.test('realm settings', async (t) => {
  const sys = await startSystem(t, { only: ['users', 'subscriptions', 'events', 'gateway'] });
  const { iago, desdemona, hamlet } = sys.people;
  const owner = sys.client(iago);
  const admin = sys.client(desdemona);

  t.test('administrators change them; the reply lists the changes, strings as "updated"', async (t) => {
    const r = await admin.patch('/realm', { name: 'Kronborg', description: 'A castle', mandatory_topics: true, edit_topic_policy: 2, message_content_edit_limit_seconds: 'unlimited' });
    t.equal(r.status, 200);
    t.same(r.body, { result: 'success', msg: '', name: 'updated', description: 'updated', mandatory_topics: true, edit_topic_policy: 2, message_content_edit_limit_seconds: null });
    const state = await register(sys.client(hamlet), { fetch_event_types: ['realm'] });
    t.match(state, { realm_name: 'Kronborg', realm_description: 'A castle', realm_mandatory_topics: true, realm_edit_topic_policy: 2, realm_message_content_edit_limit_seconds: null });
    const again = await admin.patch('/realm', { mandatory_topics: true });
    t.same(again.body, { result: 'success', msg: '' }, 'an unchanged value is no change');
    const settings = await sys.anonymous().get('/server_settings');
    t.equal(settings.body.realm_name, 'Kronborg', 'the realm as /server_settings shows it');
  });

  t.test('members may not; some settings are owners\' only', async (t) => {
    const member = await sys.client(hamlet).patch('/realm', { name: 'Mine' });
    t.equal(member.status, 400);
    t.match(member.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization administrator' });
    for (const body of [{ invite_required: false }, { waiting_period_threshold: 3 }, { message_retention_days: 30 }, { emails_restricted_to_domains: true }]) {
      const r = await admin.patch('/realm', body);
      t.match(r.body, { result: 'error', code: 'UNAUTHORIZED_PRINCIPAL', msg: 'Must be an organization owner' }, JSON.stringify(body));
    }
    t.match((await owner.patch('/realm', { waiting_period_threshold: 3, message_retention_days: 'unlimited' })).body, { result: 'success', waiting_period_threshold: 3 });
  });

  t.test('bad values', async (t) => {
    const cases: Array<[Params, string]> = [
      [{ name: 'x'.repeat(41) }, 'name is too long (limit: 40 characters)'],
      [{ description: 'x'.repeat(1001) }, 'description is too long (limit: 1000 characters)'],
      [{ edit_topic_policy: 9 }, 'Invalid edit_topic_policy'],
      [{ wildcard_mention_policy: 4 }, 'Invalid wildcard_mention_policy'],
      [{ create_web_public_stream_policy: 1 }, 'Invalid create_web_public_stream_policy'],
      [{ default_language: 'klingon' }, "Invalid language 'klingon'"],
      [{ video_chat_provider: 9 }, 'Invalid video_chat_provider 9'],
      [{ giphy_rating: 9 }, 'Invalid giphy_rating 9'],
      [{ message_content_edit_limit_seconds: 0 }, "Bad value for 'message_content_edit_limit_seconds': 0"],
      [{ message_content_delete_limit_seconds: 'sometimes' }, "Bad value for 'message_content_delete_limit_seconds': sometimes"],
      [{ message_retention_days: -3 }, "Bad value for 'message_retention_days': -3"],
      [{ waiting_period_threshold: -1 }, "Bad value for 'waiting_period_threshold': -1"],
      [{ authentication_methods: JSON.stringify({ Email: false }) }, 'At least one authentication method must be enabled.'],
      [{ authentication_methods: JSON.stringify({ SAML: true }) }, 'Invalid authentication method: SAML'],
      [{ notifications_stream_id: 424242 }, 'Invalid stream ID'],
      [{ allow_message_editing: 'perhaps' }, 'Argument "allow_message_editing" is not valid JSON.'],
    ];
    for (const [body, msg] of cases) {
      const r = await owner.patch('/realm', { ...body, send_welcome_emails: false });
      t.equal(r.status, 400, msg);
      t.match(r.body, { result: 'error', msg }, msg);
    }
    const state = await register(owner, { fetch_event_types: ['realm'] });
    t.equal(state.realm_send_welcome_emails, true, 'a refused request changes nothing');
  });

  t.test('notifications stream: an existing stream, or -1 for none', async (t) => {
    await owner.post('/users/me/subscriptions', { subscriptions: [{ name: 'announce' }] });
    const id = (await owner.get('/get_stream_id', { stream: 'announce' })).body.stream_id as number;
    t.match((await admin.patch('/realm', { notifications_stream_id: id })).body, { result: 'success', notifications_stream_id: id });
    t.match((await admin.patch('/realm', { notifications_stream_id: -1 })).body, { result: 'success', notifications_stream_id: -1 });
  });
});

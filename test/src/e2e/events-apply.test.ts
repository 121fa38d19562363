/**
 * Modelled on Zulip's test_events: for each action, the events a queue receives, applied to
 * that queue's /register state, must give exactly the state a fresh /register returns. This
 * checks at once that every action sends the events it should, with the right shapes, and
 * that /register and the events agree.
 */
import t from 'tap';
import type { Params } from '../client.js';
import { startSystem } from '../harness.js';
import { verifyAction } from './events-verify.js';
import { upload } from './uploads-support.js';

t.test('events applied to register state equal a fresh register', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, iago, othello } = sys.people;
  const h = sys.client(hamlet);
  // client_gravatar=false: the users service sends avatar URLs in realm_user events.
  const base: Params = { client_gravatar: false, apply_markdown: true };

  t.test('drafts add, update, remove', async (t) => {
    let id = 0;
    await verifyAction(t, sys, h, async () => {
      id = ((await h.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'one' }, { type: 'private', to: [othello.user_id], topic: '', content: 'two' }] })).body.ids as number[])[0] as number;
    }, { params: base, expect: ['drafts/add'] });
    await verifyAction(t, sys, h, () => h.patch(`/drafts/${id}`, { draft: { type: '', to: [], topic: '', content: 'one, edited' } }), { params: base, expect: ['drafts/update'] });
    await verifyAction(t, sys, h, () => h.delete(`/drafts/${id}`), { params: base, expect: ['drafts/remove'] });
    // Turning synchronising off deletes the remaining draft without a drafts event.
    const params = { ...base, event_types: ['drafts', 'user_settings'] };
    await verifyAction(t, sys, h, () => h.patch('/settings', { enable_drafts_synchronization: false }), { params, expect: ['user_settings/update'] });
    await verifyAction(t, sys, h, () => h.patch('/settings', { enable_drafts_synchronization: true }), { params, expect: ['user_settings/update'] });
  });

  t.test('realm_user add (POST /users)', async (t) => {
    await verifyAction(t, sys, h, () => sys.client(iago).post('/users', { email: 'laertes@zulip.test', password: 'laertes-pw-123', full_name: 'Laertes' }), {
      params: { ...base, event_types: ['realm_user'] },
      expect: ['realm_user/add'],
    });    // The new member joins role:members and, with no waiting period, role:fullmembers (Zulip's do_create_user).
    const events = await verifyAction(t, sys, h, () => sys.client(iago).post('/users', { email: 'ophelia@zulip.test', password: 'ophelia-pw-123', full_name: 'Ophelia' }), {
      params: { ...base, event_types: ['realm_user', 'user_group'], fetch_event_types: ['realm_user', 'user_group', 'realm_user_groups'] },
      expect: ['realm_user/add', 'user_group/add_members'],
    });
    t.equal(events.filter((e) => e.type === 'user_group').length, 2, 'role:members and role:fullmembers');
  });

  t.test('subscribing to a new stream, muting it, muting a topic, leaving it', async (t) => {
    // With notification_settings_null the state keeps the nulls the events carry (Zulip FL 89 clients).
    const params = { ...base, event_types: ['subscription', 'stream', 'user_topic'], client_capabilities: { notification_settings_null: true } };
    await verifyAction(t, sys, h, () => h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Elsinore walls', description: 'cold' }] }), {
      params,
      expect: ['stream/create', 'subscription/add'],
    });
    const streamId = (await h.get('/get_stream_id', { stream: 'Elsinore walls' })).body.stream_id as number;
    await verifyAction(t, sys, h, () => h.post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: streamId, property: 'is_muted', value: true }] }), {
      params,
      expect: ['subscription/update'],
    });
    await verifyAction(t, sys, h, () => h.patch('/users/me/subscriptions/muted_topics', { stream_id: streamId, topic: 'ghosts', op: 'add' }), {
      params,
      expect: ['user_topic'],
    });
    await verifyAction(t, sys, h, () => h.delete('/users/me/subscriptions', { subscriptions: ['Elsinore walls'] }), {
      params,
      expect: ['subscription/remove'],
    });
  });

  t.test('subscribing without notification_settings_null: the event carries false, as /register does', async (t) => {
    await verifyAction(t, sys, h, () => h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Old client walls' }] }), {
      params: { ...base, event_types: ['subscription', 'stream'] },
      expect: ['stream/create', 'subscription/add'],
    });
  });

  t.test('another user joining a stream (include_subscribers)', async (t) => {
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Battlements' }] });
    await verifyAction(t, sys, h, () => sys.client(othello).post('/users/me/subscriptions', { subscriptions: [{ name: 'Battlements' }] }), {
      params: { ...base, event_types: ['subscription'], include_subscribers: true },
      expect: ['subscription/peer_add'],
    });
  });

  t.test('a stream message, then reading it', async (t) => {
    await sys.client(othello).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
    const params = { ...base, event_types: ['message', 'update_message_flags'] };
    let messageId = 0;
    const [event] = await verifyAction(t, sys, h, async () => {
      const r = await sys.client(othello).post('/messages', { type: 'stream', to: 'Verona', topic: 'tidings', content: 'The **king** is dead' });
      messageId = r.body.id as number;
    }, { params, expect: ['message'] });
    t.match(event, { type: 'message', flags: [], message: { id: messageId, content: /^<p>The .*king.* is dead<\/p>$/, content_type: 'text/html', subject: 'tidings' } });
    await verifyAction(t, sys, h, () => h.post('/messages/flags', { messages: [messageId], op: 'add', flag: 'read' }), { params, expect: ['update_message_flags/add'] });
    await verifyAction(t, sys, h, () => h.post('/messages/flags', { messages: [messageId], op: 'add', flag: 'starred' }), {
      params: { ...params, fetch_event_types: ['message', 'update_message_flags', 'starred_messages'] },
      expect: ['update_message_flags/add'],
    });
  });

  t.test('reaction add and remove', async (t) => {
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Reactions court' }] });
    const id = (await sys.client(othello).post('/messages', { type: 'private', to: JSON.stringify([hamlet.user_id]), content: 'react to me' })).body.id as number;
    const params = { ...base, event_types: ['reaction', 'message'] };
    await verifyAction(t, sys, h, () => h.post(`/messages/${id}/reactions`, { emoji_name: 'tada' }), { params, expect: ['reaction/add'] });
    await verifyAction(t, sys, h, () => h.delete(`/messages/${id}/reactions`, { emoji_name: 'tada' }), { params, expect: ['reaction/remove'] });
  });

  t.test('attachment add, update (linked by a message, then edited away), remove', async (t) => {
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Archives' }] });
    const params = { ...base, event_types: ['attachment'] };
    let uri = '';
    const [added] = await verifyAction(t, sys, h, async () => {
      uri = (await upload(sys, hamlet, [{ filename: 'ledger.txt', contentType: 'text/plain', data: Buffer.from('debts') }])).json.uri as string;
    }, { params, expect: ['attachment/add'] });
    const id = (added?.attachment as { id: number }).id;
    let messageId = 0;
    const linked = await verifyAction(t, sys, h, async () => {
      messageId = (await h.post('/messages', { type: 'stream', to: 'Archives', topic: 'books', content: `[ledger](${uri})` })).body.id as number;
    }, { params, expect: ['attachment/update'] });
    // The link reaches the uploads service twice (pushed before the send is answered, and by event): one update.
    t.equal(linked.length, 1, 'one update event');
    t.match(linked[0], { attachment: { id, messages: [{ id: messageId }] } });
    const unlinked = await verifyAction(t, sys, h, () => h.patch(`/messages/${messageId}`, { content: 'ledger burnt' }), { params, expect: ['attachment/update'] });
    t.equal(unlinked.length, 1, 'one update event');
    t.match(unlinked[0], { attachment: { id, messages: [] } });
    await verifyAction(t, sys, h, () => h.delete(`/attachments/${id}`), { params, expect: ['attachment/remove'] });
  });

  t.test('a direct message with apply_markdown=false', async (t) => {
    const params = { client_gravatar: false, apply_markdown: false, event_types: ['message'] };
    const [event] = await verifyAction(t, sys, h, () => sys.client(othello).post('/messages', { type: 'private', to: JSON.stringify([hamlet.user_id]), content: 'A *private* word' }), {
      params,
      expect: ['message'],
    });
    t.match(event, { message: { content: 'A *private* word', content_type: 'text/x-markdown', type: 'private' } });
  });

  t.test('user_settings update, with and without the user_settings_object capability', async (t) => {
    const modern = { ...base, event_types: ['user_settings'], client_capabilities: { user_settings_object: true } };
    await verifyAction(t, sys, h, () => h.patch('/settings', { twenty_four_hour_time: true, emojiset: 'text' }), {
      params: modern,
      expect: ['user_settings/update'],
    });
    await verifyAction(t, sys, h, () => h.patch('/settings', { default_language: 'de' }), { params: modern, expect: ['user_settings/update'] });
    // Older clients fetch the legacy top-level keys and get the legacy events as well.
    const legacy = { ...base, event_types: ['user_settings', 'update_display_settings', 'update_global_notifications'] };
    await verifyAction(t, sys, h, () => h.patch('/settings/display', { high_contrast_mode: true, color_scheme: 2 }), {
      params: legacy,
      expect: ['user_settings/update', 'update_display_settings'],
    });
    await verifyAction(t, sys, h, () => h.patch('/settings/notifications', { enable_sounds: false, notification_sound: 'ding' }), {
      params: legacy,
      expect: ['user_settings/update', 'update_global_notifications'],
    });
  });

  t.test('timezone and full name: realm_user update to everyone', async (t) => {
    const params = { ...base, event_types: ['realm_user', 'user_settings', 'update_display_settings'] };
    await verifyAction(t, sys, h, () => h.patch('/settings', { timezone: 'Europe/Copenhagen' }), {
      params,
      expect: ['user_settings/update', 'update_display_settings', 'realm_user/update'],
    });
    await verifyAction(t, sys, sys.client(othello), () => h.patch('/settings', { full_name: 'Prince Hamlet' }), {
      params: { ...base, event_types: ['realm_user'] },
      expect: ['realm_user/update'],
    });
    await verifyAction(t, sys, h, () => h.patch('/settings', { full_name: 'Hamlet' }), { params: { ...base, event_types: ['realm_user'] }, expect: ['realm_user/update'] });
  });

  t.test('realm update and update_dict', async (t) => {
    const admin = sys.client(iago);
    const params = { ...base, event_types: ['realm'] };
    await verifyAction(t, sys, h, () => admin.patch('/realm', { name: 'Kronborg', waiting_period_threshold: 3 }), { params, expect: ['realm/update'] });
    await verifyAction(t, sys, h, () => admin.patch('/realm', { allow_message_editing: false, message_content_edit_limit_seconds: 'unlimited' }), {
      params,
      expect: ['realm/update_dict'],
    });
    await verifyAction(t, sys, h, () => admin.patch('/realm', { message_retention_days: 30, default_language: 'fr' }), { params, expect: ['realm/update'] });
  });

  t.test('presence: users coming online (modern and legacy formats)', async (t) => {
    await verifyAction(t, sys, h, () => sys.client(othello).post('/users/me/presence', { status: 'active', ping_only: true }), {
      params: { ...base, event_types: ['presence'], slim_presence: true },
      expect: ['presence'],
    });
    await verifyAction(t, sys, h, () => sys.client(iago).post('/users/me/presence', { status: 'idle' }), {
      params: { ...base, event_types: ['presence'] },
      expect: ['presence'],
    });
  });
});

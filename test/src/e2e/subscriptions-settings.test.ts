/**
 * Personal subscription settings (spec 4.1), muted topics (spec 4.12 and §3), the
 * /register state the subscriptions service serves, and the stream statistics it keeps
 * from message.sent events.
 */
import t from 'tap';
import { Bus } from '@zc/shared/bus';
import { messagesEvents, Role, subscriptionsRpc, type Actor } from '@zc/shared/contracts';
import { createLogger } from '@zc/shared/logging';
import type { Params } from '../client.js';
import { startSystem, type Account } from '../harness.js';
import { subscriptionsOutbox } from './subscriptions-inbox.js';

type Obj = Record<string, unknown>;

t.test('subscription settings and muted topics', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello } = sys.people;
  const outbox = await subscriptionsOutbox(sys, t);
  const as = (a: Account) => sys.client(a);
  const bus = await Bus.connect({ url: sys.env.infra.natsUrl, prefix: sys.env.prefix, name: 'subscriptions-settings-test', log: createLogger({ service: 'test', level: 'silent' }) });
  t.teardown(() => bus.close());
  const actorOf = (a: Account, role: number): Actor => ({ realm_id: sys.realmId, user_id: a.user_id, role, email: a.email, full_name: a.full_name, is_bot: false });

  await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }, { name: 'Denmark' }] });
  await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], invite_only: true });
  const ids: Record<string, number> = {};
  for (const s of (await as(iago).get('/streams', { include_all_active: true })).body.streams as Obj[]) ids[s.name as string] = s.stream_id as number;
  await outbox.next();
  const mySub = async (a: Account, name: string) => ((await as(a).get('/users/me/subscriptions')).body.subscriptions as Obj[]).find((s) => s.name === name);

  t.test('every property can be set; muting sends in_home_view then is_muted', async (t) => {
    const r = await as(hamlet).post('/users/me/subscriptions/properties', {
      subscription_data: [
        { stream_id: ids.Verona, property: 'color', value: '#abcdef' },
        { stream_id: ids.Verona, property: 'pin_to_top', value: true },
        { stream_id: ids.Verona, property: 'is_muted', value: true },
        { stream_id: ids.Verona, property: 'desktop_notifications', value: true },
        { stream_id: ids.Verona, property: 'audible_notifications', value: false },
        { stream_id: ids.Verona, property: 'push_notifications', value: true },
        { stream_id: ids.Verona, property: 'email_notifications', value: false },
        { stream_id: ids.Verona, property: 'wildcard_mentions_notify', value: true },
      ],
    });
    t.same(r.body, { result: 'success', msg: '', ignored_parameters_unsupported: [] });
    t.match(await mySub(hamlet, 'Verona'), {
      color: '#abcdef',
      pin_to_top: true,
      is_muted: true,
      in_home_view: false,
      desktop_notifications: true,
      audible_notifications: false,
      push_notifications: true,
      email_notifications: false,
      wildcard_mentions_notify: true,
    });
    const { notify, domain } = await outbox.next();
    t.ok(notify.every((n) => n.users.length === 1 && n.users[0] === hamlet.user_id), 'only the user hears of it');
    t.same(
      notify.map((n) => [n.event.property, n.event.value]),
      [
        ['color', '#abcdef'],
        ['pin_to_top', true],
        ['in_home_view', false],
        ['is_muted', true],
        ['desktop_notifications', true],
        ['audible_notifications', false],
        ['push_notifications', true],
        ['email_notifications', false],
        ['wildcard_mentions_notify', true],
      ],
    );
    t.same(notify[3]?.event, { type: 'subscription', op: 'update', stream_id: ids.Verona, property: 'is_muted', value: true });
    t.match(domain[2], { subject: 'subscriptions.evt.v1.subscription.updated', payload: { realm_id: sys.realmId, stream_id: ids.Verona, user_id: hamlet.user_id, property: 'is_muted', value: true } });
  });

  t.test('in_home_view is the inverse of is_muted; unknown parameters are reported', async (t) => {
    const r = await as(hamlet).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ids.Verona, property: 'in_home_view', value: true }], shiny: 'yes' });
    t.same(r.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['shiny'] });
    t.match(await mySub(hamlet, 'Verona'), { is_muted: false, in_home_view: true });
    const { notify, domain } = await outbox.next();
    t.same(notify.map((n) => n.event), [
      { type: 'subscription', op: 'update', stream_id: ids.Verona, property: 'in_home_view', value: true },
      { type: 'subscription', op: 'update', stream_id: ids.Verona, property: 'is_muted', value: false },
    ]);
    t.same(domain.map((d) => [d.payload.property, d.payload.value]), [['is_muted', false]]);
  });

  t.test('property errors, and a refused request changes nothing', async (t) => {
    const before = await mySub(hamlet, 'Denmark');
    const attempt = async (bad: Obj) =>
      (await as(hamlet).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ids.Denmark, property: 'pin_to_top', value: true }, bad] })).body;
    t.same(await attempt({ stream_id: ids.Denmark, property: 'name', value: 'x' }), { result: 'error', msg: 'Unknown subscription property: name', code: 'BAD_REQUEST' });
    t.same(await attempt({ stream_id: ids.Denmark, property: 'color', value: 'blue' }), { result: 'error', msg: 'color is not a valid hex color code', code: 'BAD_REQUEST' });
    t.same(await attempt({ stream_id: ids.Denmark, property: 'is_muted', value: 'yes' }), { result: 'error', msg: 'is_muted is not a boolean', code: 'BAD_REQUEST' });
    t.same(await attempt({ stream_id: ids.Secret, property: 'is_muted', value: true }), { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' }, 'a private stream one cannot see');
    t.same(await attempt({ stream_id: 987654, property: 'is_muted', value: true }), { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    const other = await as(othello).post('/users/me/subscriptions/properties', { subscription_data: [{ stream_id: ids.Verona, property: 'pin_to_top', value: true }] });
    t.same(other.body, { result: 'error', msg: `Not subscribed to channel ID ${ids.Verona}`, code: 'BAD_REQUEST' });
    const missing = await as(hamlet).post('/users/me/subscriptions/properties', {});
    t.same(missing.body, { result: 'error', msg: "Missing 'subscription_data' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'subscription_data' });
    t.same(await mySub(hamlet, 'Denmark'), before, 'the valid first change was not applied');
    t.same((await outbox.next()).notify, []);
  });

  t.test('muting and unmuting a topic (spec §3)', async (t) => {
    const mute = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream_id: ids.Verona, topic: 'Balcony', op: 'add' });
    t.same(mute.body, { result: 'success', msg: '' });
    const { notify, domain } = await outbox.next();
    t.match(notify, [
      { users: [hamlet.user_id], event: { type: 'user_topic', stream_id: ids.Verona, topic_name: 'Balcony', visibility_policy: 1, last_updated: Number } },
      { users: [hamlet.user_id], event: { type: 'muted_topics', muted_topics: [['Verona', 'Balcony', Number]] } },
    ]);
    t.match(domain, [{ subject: 'subscriptions.evt.v1.user_topic.changed', payload: { user_id: hamlet.user_id, stream_id: ids.Verona, topic_name: 'Balcony', visibility_policy: 1 } }]);

    const again = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream: 'Verona', topic: 'balcony', op: 'add' });
    t.equal(again.status, 400);
    t.same(again.body, { result: 'error', msg: 'Topic already muted' }, 'no code; topics match in any case');
    t.same((await outbox.next()).notify, [], 'a refused mute sends nothing');

    const unmute = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream: 'verona', topic: 'BALCONY', op: 'remove' });
    t.same(unmute.body, { result: 'success', msg: '' });
    const after = await outbox.next();
    t.match(after.notify, [
      { event: { type: 'user_topic', topic_name: 'Balcony', visibility_policy: 0 } },
      { event: { type: 'muted_topics', muted_topics: [] } },
    ]);
    const notMuted = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream_id: ids.Verona, topic: 'Balcony', op: 'remove' });
    t.same(notMuted.body, { result: 'error', msg: 'Topic is not muted' });
    const nowhere = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream_id: 987654, topic: 'x', op: 'remove' });
    t.same(nowhere.body, { result: 'error', msg: 'Topic is not muted' }, 'unmuting in a missing stream is "not muted" too');
  });

  t.test('muting needs access to the stream, not a subscription', async (t) => {
    const unsubscribed = await as(othello).patch('/users/me/subscriptions/muted_topics', { stream_id: ids.Verona, topic: 'Gossip', op: 'add' });
    t.same(unsubscribed.body, { result: 'success', msg: '' });
    const hidden = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream_id: ids.Secret, topic: 'x', op: 'add' });
    t.same(hidden.body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    const byName = await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream: 'Secret', topic: 'x', op: 'add' });
    t.same(byName.body, { result: 'error', msg: "Invalid channel name 'Secret'", code: 'BAD_REQUEST' });
    await outbox.next();
  });

  t.test('muted_topics parameter errors', async (t) => {
    const patch = async (p: Params) => (await as(hamlet).patch('/users/me/subscriptions/muted_topics', p)).body;
    t.same(await patch({ topic: 'x', op: 'add' }), { result: 'error', msg: "Please supply 'stream'.", code: 'BAD_REQUEST' });
    t.same(await patch({ stream: 'Verona', stream_id: ids.Verona, topic: 'x', op: 'add' }), { result: 'error', msg: "Please choose one: 'stream' or 'stream_id'.", code: 'BAD_REQUEST' });
    t.same(await patch({ stream_id: ids.Verona, topic: 'x', op: 'toggle' }), { result: 'error', msg: 'Invalid op', code: 'BAD_REQUEST', var_name: 'op' });
    t.same(await patch({ stream_id: ids.Verona, op: 'add' }), { result: 'error', msg: "Missing 'topic' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'topic' });
    t.same((await outbox.next()).domain, []);
  });

  t.test('/register state: subscriptions, unsubscribed, never_subscribed, streams, user topics', async (t) => {
    await as(hamlet).patch('/users/me/subscriptions/muted_topics', { stream_id: ids.Denmark, topic: 'Rotten', op: 'add' });
    await as(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Denmark'] });
    const fetch = ['subscription', 'stream', 'user_topic', 'muted_topics', 'default_streams'];
    const r = await bus.request(subscriptionsRpc.registerState, { actor: actorOf(hamlet, Role.MEMBER), fetch, options: { include_subscribers: true } });
    t.match(r.snapshot, /^\d+:\d+:/);
    const state = r.state as Record<string, Obj[]>;
    t.same(state.subscriptions?.map((s) => s.name), ['Verona']);
    t.match(state.subscriptions?.[0], { subscribers: [hamlet.user_id], color: '#abcdef', desktop_notifications: true });
    t.same(state.unsubscribed?.map((s) => s.name), ['Denmark']);
    t.same(state.never_subscribed, [], 'hamlet has seen every public stream; the private one is hidden');
    t.same(state.streams?.map((s) => s.name), ['Denmark', 'Verona']);
    t.same(state.realm_default_streams, []);
    t.match(state.user_topics, [{ stream_id: ids.Denmark, topic_name: 'Rotten', visibility_policy: 1, last_updated: Number }]);
    t.match(state.muted_topics, [['Denmark', 'Rotten', Number]], 'muted_topics too when event_types is not given');

    const modern = await bus.request(subscriptionsRpc.registerState, {
      actor: actorOf(hamlet, Role.MEMBER),
      fetch: ['user_topic', 'muted_topics', 'subscription'],
      options: { event_types: ['user_topic', 'muted_topics', 'subscription'], client_capabilities: { notification_settings_null: true } },
    });
    t.notOk('muted_topics' in modern.state, 'clients asking for user_topic do not get the legacy list');
    t.equal((modern.state.unsubscribed as Obj[])[0]?.audible_notifications, null, 'null settings for clients that take them');
    t.notOk('subscribers' in ((modern.state.subscriptions as Obj[])[0] ?? {}));
    const legacy = await bus.request(subscriptionsRpc.registerState, { actor: actorOf(hamlet, Role.MEMBER), fetch: ['subscription'], options: {} });
    t.equal((legacy.state.unsubscribed as Obj[])[0]?.audible_notifications, false, 'older clients get the default instead of null');

    const admin = await bus.request(subscriptionsRpc.registerState, { actor: actorOf(desdemona, Role.ADMINISTRATOR), fetch: ['subscription', 'stream'], options: { include_subscribers: true } });
    t.same((admin.state.never_subscribed as Obj[]).map((s) => [s.name, s.subscribers]), [
      ['Denmark', []],
      ['Secret', [iago.user_id]],
      ['Verona', [hamlet.user_id]],
    ], 'administrators see private streams they never joined');
    t.same((admin.state.streams as Obj[]).map((s) => s.name), ['Denmark', 'Secret', 'Verona']);
    await outbox.next();
  });

  t.test('first_message_id and weekly traffic come from message.sent events', async (t) => {
    const sent = (message_id: number, stream_id: number | null) =>
      bus.publish(messagesEvents.messageSent, { realm_id: sys.realmId, message_id, stream_id, sender_id: hamlet.user_id, timestamp: Math.floor(Date.now() / 1000) }, { msgId: `test-${message_id}-${stream_id}` });
    await sent(900002, ids.Verona as number);
    await sent(900001, ids.Verona as number);
    await sent(900003, null);
    await sent(900004, 987654);
    let verona: Obj | undefined;
    for (let i = 0; i < 100 && verona?.first_message_id !== 900001; i++) {
      await new Promise((r) => setTimeout(r, 50));
      verona = await mySub(hamlet, 'Verona');
    }
    t.equal(verona?.first_message_id, 900001, 'the lowest message id, whatever the order of events');
    t.equal(verona?.stream_weekly_traffic, null, 'a stream younger than a week has no estimate');
    const stream = (await as(hamlet).get(`/streams/${ids.Verona}`)).body.stream as Obj;
    t.equal(stream.first_message_id, 900001);
  });
});

/**
 * Subscribing, unsubscribing and listing streams through the gateway (spec 4.6, 4.13,
 * 4.22), with the events the subscriptions service writes to its outbox. Subtests share one
 * system and run in order: each builds on the streams the previous ones made.
 */
import t from 'tap';
import type { Params } from '../client.js';
import { startSystem } from '../harness.js';
import { subscriptionsOutbox } from './subscriptions-inbox.js';

type Obj = Record<string, unknown>;
const PALETTE = ['#76ce90', '#fae589', '#a6c7e5', '#e79ab5'];

t.test('subscriptions through the gateway', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, othello, polonius, bot } = sys.people;
  const outbox = await subscriptionsOutbox(sys, t);
  const as = (a: typeof hamlet) => sys.client(a);
  const subscriptionsOf = async (a: typeof hamlet, include_subscribers = false) =>
    (await as(a).get('/users/me/subscriptions', { include_subscribers })).body.subscriptions as Obj[];
  const streamNamed = async (name: string) =>
    ((await as(iago).get('/streams', { include_all_active: true })).body.streams as Obj[]).find((s) => s.name === name);
  const ids: Record<string, number> = {};
  const members = [iago, desdemona, hamlet, othello, bot].map((p) => p.user_id);

  t.test('subscribing to a missing stream creates it and tells everyone who can see it', async (t) => {
    const r = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: ' Verona ', description: 'Fair\n*Verona*' }], announce: true });
    t.equal(r.status, 200);
    t.same(r.body, { result: 'success', msg: '', subscribed: { [hamlet.email]: ['Verona'] }, already_subscribed: {} });
    const verona = await streamNamed('Verona');
    t.match(verona, { description: 'Fair *Verona*', rendered_description: '<p>Fair <em>Verona</em></p>', invite_only: false, is_web_public: false, history_public_to_subscribers: true, stream_post_policy: 1, message_retention_days: null, creator_id: hamlet.user_id });
    ids.Verona = verona?.stream_id as number;

    const { notify, domain } = await outbox.next();
    t.same(domain.map((d) => d.subject), ['subscriptions.evt.v1.stream.created', 'subscriptions.evt.v1.stream.announced', 'subscriptions.evt.v1.subscribers.added']);
    t.match(domain[0]?.payload, { stream_id: ids.Verona, realm_id: sys.realmId, name: 'Verona', invite_only: false, creator_id: hamlet.user_id });
    t.same(domain[1]?.payload, { realm_id: sys.realmId, stream_id: ids.Verona, stream_name: 'Verona', creator_id: hamlet.user_id, invite_only: false });
    t.same(domain[2]?.payload, { realm_id: sys.realmId, stream_id: ids.Verona, user_ids: [hamlet.user_id] });

    t.equal(notify.length, 3);
    const [create, add, peer] = notify;
    t.match(create?.event, { type: 'stream', op: 'create', streams: [{ stream_id: ids.Verona, name: 'Verona', rendered_description: '<p>Fair <em>Verona</em></p>' }] });
    t.ok(members.every((id) => create?.users.includes(id)), 'every member hears of a public stream');
    t.notOk(create?.users.includes(polonius.user_id), 'guests do not');
    t.same(add?.users, [hamlet.user_id]);
    t.match(add?.event, { type: 'subscription', op: 'add', subscriptions: [{ stream_id: ids.Verona, name: 'Verona', color: PALETTE[0], is_muted: false, in_home_view: true, subscribers: [hamlet.user_id], email_address: /^verona\.[0-9a-f]{32}@/ }] });
    t.same(peer?.event, { type: 'subscription', op: 'peer_add', stream_ids: [ids.Verona], user_ids: [hamlet.user_id] });
    t.notOk(peer?.users.includes(hamlet.user_id), 'the subscribed user gets no peer_add');
    t.ok(peer?.users.includes(othello.user_id));
  });

  t.test('subscribing again, in another case, is already_subscribed and changes nothing', async (t) => {
    const r = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'verona' }] });
    t.same(r.body, { result: 'success', msg: '', subscribed: {}, already_subscribed: { [hamlet.email]: ['Verona'] } });
    const { notify, domain } = await outbox.next();
    t.same([notify.length, domain.length], [0, 0]);
  });

  t.test('a private stream is created with its settings for the principals', async (t) => {
    const r = await as(iago).post('/users/me/subscriptions', {
      subscriptions: [{ name: 'Secret' }],
      principals: [iago.user_id, othello.user_id],
      invite_only: true,
      history_public_to_subscribers: true,
      stream_post_policy: 2,
      message_retention_days: 30,
    });
    t.same(r.body, { result: 'success', msg: '', subscribed: { [iago.email]: ['Secret'], [othello.email]: ['Secret'] }, already_subscribed: {} });
    const [secret] = (await subscriptionsOf(othello)).filter((s) => s.name === 'Secret');
    t.match(secret, { invite_only: true, history_public_to_subscribers: true, stream_post_policy: 2, is_announcement_only: true, message_retention_days: 30, color: PALETTE[0] });
    ids.Secret = secret?.stream_id as number;
    const { notify, domain } = await outbox.next();
    t.same(domain.map((d) => d.subject), ['subscriptions.evt.v1.stream.created', 'subscriptions.evt.v1.subscribers.added'], 'no announcement unless asked');
    t.same(domain[1]?.payload, { realm_id: sys.realmId, stream_id: ids.Secret, user_ids: [iago.user_id, othello.user_id] });
    const create = notify.find((n) => n.event.type === 'stream');
    t.same(create?.users, [iago.user_id, desdemona.user_id, othello.user_id].sort((a, b) => a - b), 'a private stream is shown to its subscribers and the administrators');
    t.same(notify.filter((n) => n.event.op === 'add').map((n) => n.users).sort(), [[iago.user_id], [othello.user_id]]);
    const peer = notify.find((n) => n.event.op === 'peer_add');
    t.same(peer?.users, [desdemona.user_id], 'peers of a private stream: its other subscribers and the administrators');
  });

  t.test('private streams keep their history from new subscribers unless asked otherwise', async (t) => {
    await as(desdemona).post('/users/me/subscriptions', { subscriptions: [{ name: 'Quiet' }], invite_only: true });
    t.match(await streamNamed('Quiet'), { invite_only: true, history_public_to_subscribers: false });
    await as(desdemona).post('/users/me/subscriptions', { subscriptions: [{ name: 'Loud' }], history_public_to_subscribers: false });
    t.match(await streamNamed('Loud'), { invite_only: false, history_public_to_subscribers: true }, 'public streams always share history');
    await outbox.next();
  });

  t.test('message_retention_days: owners only, integers or the named values', async (t) => {
    await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Forever' }], message_retention_days: 'unlimited' });
    t.match(await streamNamed('Forever'), { message_retention_days: -1 });
    await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Default' }], message_retention_days: '"realm_default"' });
    t.match(await streamNamed('Default'), { message_retention_days: null });
    const admin = await as(desdemona).post('/users/me/subscriptions', { subscriptions: [{ name: 'Short' }], message_retention_days: 5 });
    t.equal(admin.status, 400);
    t.same(admin.body, { result: 'error', msg: 'Must be an organization owner', code: 'BAD_REQUEST' });
    const zero = await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Short' }], message_retention_days: 0 });
    t.same(zero.body, { result: 'error', msg: "Bad value for 'message_retention_days': 0", code: 'REQUEST_VARIABLE_INVALID', var_name: 'message_retention_days', bad_value: 0 });
    t.equal(await streamNamed('Short'), undefined, 'a refused request creates nothing');
    await outbox.next();
  });

  t.test('a private stream the caller cannot access', async (t) => {
    const fatal = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }, { name: 'Verona' }] });
    t.equal(fatal.status, 400);
    t.same(fatal.body, { result: 'error', msg: 'Unable to access channel (Secret).' }, 'no code (spec §7)');
    const lenient = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }, { name: 'Lenient' }], authorization_errors_fatal: false });
    t.equal(lenient.status, 200);
    t.same(lenient.body, { result: 'success', msg: '', subscribed: { [hamlet.email]: ['Lenient'] }, already_subscribed: {}, unauthorized: ['Secret'] });
    t.notOk((await subscriptionsOf(hamlet)).some((s) => s.name === 'Secret'), 'still not subscribed');
    const admin = await as(desdemona).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }] });
    t.same(admin.body, { result: 'error', msg: 'Unable to access channel (Secret).' }, 'administrators need an invitation too');
    await outbox.next();
  });

  t.test('guests cannot create streams, join public ones or subscribe others', async (t) => {
    const create = await as(polonius).post('/users/me/subscriptions', { subscriptions: [{ name: 'Guest house' }] });
    t.same(create.body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
    const join = await as(polonius).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
    t.same(join.body, { result: 'error', msg: 'Unable to access channel (Verona).' });
    const invite = await as(polonius).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [othello.user_id], authorization_errors_fatal: false });
    t.same(invite.body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
    t.equal(await streamNamed('Guest house'), undefined);
    t.same((await outbox.next()).notify, []);
  });

  t.test('members subscribe others; a guest subscribed to a public stream learns of it', async (t) => {
    const r = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [othello.email, polonius.email, hamlet.email] });
    t.same(r.body, {
      result: 'success',
      msg: '',
      subscribed: { [othello.email]: ['Verona'], [polonius.email]: ['Verona'] },
      already_subscribed: { [hamlet.email]: ['Verona'] },
    });
    const { notify, domain } = await outbox.next();
    t.same(domain.filter((d) => d.subject === 'subscriptions.evt.v1.subscribers.added').map((d) => d.payload), [{ realm_id: sys.realmId, stream_id: ids.Verona, user_ids: [othello.user_id, polonius.user_id] }]);
    // The notification bot tells each user subscribed by someone else (Zulip's send_messages_for_new_subscribers).
    const told = domain.filter((d) => d.subject === 'subscriptions.evt.v1.notification_bot.message').map((d) => d.payload);
    t.match(told, [
      { to: { type: 'private', user_id: othello.user_id }, content: `@**King Hamlet|${hamlet.user_id}** subscribed you to the stream #**Verona**.` },
      { to: { type: 'private', user_id: polonius.user_id } },
    ]);
    t.equal(told.length, 2);
    t.match(notify[0], { users: [polonius.user_id], event: { type: 'stream', op: 'create', streams: [{ stream_id: ids.Verona }] } }, 'the guest could not see the stream before');
    const adds = notify.filter((n) => n.event.op === 'add');
    t.same(adds.map((n) => n.users), [[othello.user_id], [polonius.user_id]]);
    t.same((adds[0]?.event.subscriptions as Obj[])[0]?.subscribers, [hamlet.user_id, othello.user_id, polonius.user_id]);
    const peer = notify.find((n) => n.event.op === 'peer_add');
    t.same(peer?.event.user_ids, [othello.user_id, polonius.user_id]);
    t.ok(peer?.users.includes(hamlet.user_id) && !peer?.users.includes(othello.user_id));
    t.same((await as(polonius).get('/streams')).body.streams, [(await as(polonius).get(`/streams/${ids.Verona}`)).body.stream], 'the guest now sees exactly that stream');
  });

  t.test('principals that name no active user of the realm', async (t) => {
    const byId = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [999999] });
    t.equal(byId.status, 403, 'Zulip before feature level 208 (ours is below)');
    t.same(byId.body, { result: 'error', msg: "User not authorized to execute queries on behalf of '999999'", code: 'UNAUTHORIZED_PRINCIPAL', principal: 999999 });
    const byEmail = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Nowhere' }], principals: ['nobody@zulip.test'] });
    t.equal(byEmail.status, 403);
    t.match(byEmail.body, { result: 'error', msg: "User not authorized to execute queries on behalf of 'nobody@zulip.test'", code: 'UNAUTHORIZED_PRINCIPAL', principal: 'nobody@zulip.test' });
    t.equal(await streamNamed('Nowhere'), undefined);
    const mixed = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [othello.user_id, 'x@zulip.test'] });
    t.match(mixed.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid principals' });
  });

  t.test('stream names and descriptions are checked', async (t) => {
    const cases: Array<[Obj, string]> = [
      [{ name: '   ' }, "Channel name can't be empty."],
      [{ name: 'n'.repeat(61) }, 'Channel name too long (limit: 60 characters).'],
      [{ name: 'bell\u0007' }, 'Invalid character in channel name, at position 5.'],
      [{ name: 'Long', description: 'd'.repeat(1025) }, 'subscriptions[0]["description"] is too long (limit: 1024 characters)'],
    ];
    for (const [entry, msg] of cases) {
      const r = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [entry] });
      t.equal(r.status, 400, msg);
      t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
    }
    // A NUL byte is refused by the parameter layer before any name rule (no parameter may hold one).
    const nul = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'nul\u0000byte' }] });
    t.equal(nul.status, 400);
    t.same(nul.body, { result: 'error', msg: 'subscriptions must not contain null bytes', code: 'BAD_REQUEST', var_name: 'subscriptions' });
    const missing = await as(hamlet).post('/users/me/subscriptions', {});
    t.same(missing.body, { result: 'error', msg: "Missing 'subscriptions' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'subscriptions' });
    const policy = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Policy' }], stream_post_policy: 9 });
    t.same(policy.body, { result: 'error', msg: 'Invalid stream_post_policy', code: 'BAD_REQUEST' });
    const web = await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Web' }], is_web_public: true });
    t.same(web.body, { result: 'error', msg: 'Web-public channels are not enabled.', code: 'BAD_REQUEST' });
    t.same((await outbox.next()).domain, [], 'nothing was created');
  });

  t.test('colors come from the palette in order, per user', async (t) => {
    const mine = await subscriptionsOf(hamlet);
    t.same(mine.map((s) => [s.name, s.color]), [['Lenient', PALETTE[1]], ['Verona', PALETTE[0]]], 'sorted by name');
    const own = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Painted', color: '#123abc' }] });
    t.equal(own.status, 200);
    t.equal((await subscriptionsOf(hamlet)).find((s) => s.name === 'Painted')?.color, '#123abc', 'a color in the request wins');
    const badColor = await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Painted', color: 'red' }] });
    t.same(badColor.body, { result: 'error', msg: 'subscriptions[0]["color"] is not a valid hex color code', code: 'BAD_REQUEST' });
    await outbox.next();
  });

  t.test('GET /users/me/subscriptions carries every field of spec 2.5', async (t) => {
    const [verona] = (await subscriptionsOf(othello, true)).filter((s) => s.name === 'Verona');
    t.same(Object.keys(verona ?? {}).sort(), [
      'audible_notifications', 'can_remove_subscribers_group_id', 'color', 'creator_id', 'date_created', 'description', 'desktop_notifications',
      'email_address', 'email_notifications', 'first_message_id', 'history_public_to_subscribers', 'in_home_view', 'invite_only', 'is_announcement_only',
      'is_archived', 'is_muted', 'is_web_public', 'message_retention_days', 'name', 'pin_to_top', 'push_notifications', 'rendered_description',
      'stream_id', 'stream_post_policy', 'stream_weekly_traffic', 'subscribers', 'wildcard_mentions_notify',
    ]);
    t.match(verona, {
      subscribers: [hamlet.user_id, othello.user_id, polonius.user_id],
      first_message_id: null,
      stream_weekly_traffic: null,
      desktop_notifications: null,
      wildcard_mentions_notify: null,
      can_remove_subscribers_group_id: Number,
      date_created: Number,
    });
    t.notOk('subscribers' in ((await subscriptionsOf(othello))[0] ?? {}), 'subscribers only with include_subscribers');
    const groups = new Set((await subscriptionsOf(othello)).map((s) => s.can_remove_subscribers_group_id));
    t.equal(groups.size, 1, 'one administrators group per realm');
  });

  t.test('unsubscribing', async (t) => {
    const r = await as(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Lenient', 'Verona'] });
    t.same(r.body, { result: 'success', msg: '', removed: ['Lenient', 'Verona'], not_removed: [] });
    const { notify, domain } = await outbox.next();
    t.same(domain.map((d) => [d.subject, d.payload.user_ids]), [
      ['subscriptions.evt.v1.subscribers.removed', [hamlet.user_id]],
      ['subscriptions.evt.v1.subscribers.removed', [hamlet.user_id]],
    ]);
    t.same(notify[0], { realm_id: sys.realmId, users: [hamlet.user_id], event: { type: 'subscription', op: 'remove', subscriptions: [{ name: 'Lenient', stream_id: (await streamNamed('Lenient'))?.stream_id }, { name: 'Verona', stream_id: ids.Verona }] } });
    const peerRemove = notify.filter((n) => n.event.op === 'peer_remove');
    t.equal(peerRemove.length, 2);
    t.ok(peerRemove.every((n) => !n.users.includes(hamlet.user_id) && n.users.includes(othello.user_id)));
    const again = await as(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Verona'] });
    t.same(again.body, { result: 'success', msg: '', removed: [], not_removed: ['Verona'] });
    const missing = await as(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Verona', 'Atlantis'] });
    t.equal(missing.status, 400);
    t.same(missing.body, { result: 'error', msg: "Channel 'Atlantis' does not exist", code: 'STREAM_DOES_NOT_EXIST', stream: 'Atlantis' });
    await outbox.next();
  });

  t.test('resubscribing restores the old subscription’s settings', async (t) => {
    await as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
    t.equal((await subscriptionsOf(hamlet)).find((s) => s.name === 'Verona')?.color, PALETTE[0]);
    await outbox.next();
  });

  t.test('removing others needs administrator rights', async (t) => {
    const denied = await as(hamlet).delete('/users/me/subscriptions', { subscriptions: ['Verona'], principals: [othello.user_id] });
    t.same(denied.body, { result: 'error', msg: 'Insufficient permission', code: 'BAD_REQUEST' });
    t.ok((await subscriptionsOf(othello)).some((s) => s.name === 'Verona'), 'othello is still subscribed');
    t.same((await outbox.next()).notify, []);
    const allowed = await as(desdemona).delete('/users/me/subscriptions', { subscriptions: ['Verona'], principals: [othello.email] });
    t.same(allowed.body, { result: 'success', msg: '', removed: ['Verona'], not_removed: [] });
    const { notify } = await outbox.next();
    t.same(notify[0]?.users, [othello.user_id]);
    t.match(notify[0]?.event, { type: 'subscription', op: 'remove' });
  });

  t.test('GET /streams with each include flag', async (t) => {
    const names = async (a: typeof hamlet, q: Params = {}) => ((await as(a).get('/streams', q)).body.streams as Obj[]).map((s) => s.name);
    t.same(await names(hamlet), ['Default', 'Forever', 'Lenient', 'Loud', 'Painted', 'Verona'], 'public and subscribed, by name');
    t.same(await names(hamlet, { include_public: false }), ['Painted', 'Verona'], 'only subscribed');
    t.same(await names(hamlet, { include_public: false, include_subscribed: false }), []);
    t.same(await names(othello, { include_public: false }), ['Secret']);
    t.same(await names(polonius, { include_subscribed: false }), [], 'guests get no public streams');
    t.same(await names(iago, { include_all_active: true }), ['Default', 'Forever', 'Lenient', 'Loud', 'Painted', 'Quiet', 'Secret', 'Verona']);
    const denied = await as(hamlet).get('/streams', { include_all_active: true });
    t.equal(denied.status, 400);
    t.same(denied.body, { result: 'error', msg: 'User not authorized for this query', code: 'BAD_REQUEST' });
    const withDefault = (await as(hamlet).get('/streams', { include_default: true })).body.streams as Obj[];
    t.ok(withDefault.every((s) => s.is_default === false));
    t.same(await names(hamlet, { include_web_public: true, include_public: false, include_subscribed: false }), [], 'no web-public streams');
    await as(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Bot food' }], principals: [iago.user_id] });
    t.same(await names(bot, { include_public: false, include_owner_subscribed: true }), ['Bot food', 'Default', 'Forever', 'Secret'], 'a bot sees its owner’s streams');
    t.same(await names(hamlet, { include_public: false, include_owner_subscribed: true }), ['Painted', 'Verona'], 'not for people');
    const one = (await as(hamlet).get('/streams')).body.streams as Obj[];
    t.match(one[0], { stream_id: Number, name: 'Bot food', description: '', invite_only: false, rendered_description: '', first_message_id: null });
    await outbox.next();
  });

  t.test('GET /streams/{stream_id} and GET /get_stream_id', async (t) => {
    const r = await as(hamlet).get(`/streams/${ids.Verona}`);
    t.match(r.body, { result: 'success', stream: { stream_id: ids.Verona, name: 'Verona', invite_only: false } });
    const hidden = await as(hamlet).get(`/streams/${ids.Secret}`);
    t.same(hidden.body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.match((await as(desdemona).get(`/streams/${ids.Secret}`)).body, { stream: { name: 'Secret', invite_only: true } }, 'administrators see private streams');
    t.same((await as(hamlet).get('/streams/987654')).body, { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' });
    t.same((await as(hamlet).get('/get_stream_id', { stream: 'verona' })).body, { result: 'success', msg: '', stream_id: ids.Verona });
    t.same((await as(hamlet).get('/get_stream_id', { stream: 'Secret' })).body, { result: 'error', msg: "Invalid channel name 'Secret'", code: 'BAD_REQUEST' });
    t.same((await as(othello).get('/get_stream_id', { stream: 'Secret' })).body.stream_id, ids.Secret);
    t.same((await as(hamlet).get('/get_stream_id')).body, { result: 'error', msg: "Missing 'stream' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'stream' });
  });

  t.test('two requests creating the same stream at once make one stream', async (t) => {
    const [a, b] = await Promise.all([
      as(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Race' }] }),
      as(othello).post('/users/me/subscriptions', { subscriptions: [{ name: 'race' }] }),
    ]);
    t.same([a.status, b.status], [200, 200]);
    const races = ((await as(iago).get('/streams', { include_all_active: true })).body.streams as Obj[]).filter((s) => String(s.name).toLowerCase() === 'race');
    t.equal(races.length, 1);
    const { domain } = await outbox.next();
    t.equal(domain.filter((d) => d.subject.endsWith('stream.created')).length, 1);
  });
});

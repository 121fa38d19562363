/**
 * Default streams (Zulip's add_default_stream / remove_default_stream and what they are for):
 * administrators choose them, non-guests hear of each change (`default_streams`), every new
 * human user joins them at creation (not bots, not someone reactivated). A new realm's
 * "general" is in new-realm-streams.test.ts.
 */
import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { startSystem, type Account } from '../harness.js';
import { streamId, subscribedNames, subscriptionsOnceIn } from './default-streams-support.js';
import { verifyAction } from './events-verify.js';

type Json = Record<string, unknown>;

t.test('POST and DELETE /default_streams', async (t) => {
  const sys = await startSystem(t);
  const { iago, desdemona, hamlet, polonius } = sys.people;
  const admin = sys.client(desdemona);
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Lobby' }, { name: 'Annex' }] });
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Hideout' }], invite_only: true });
  await sys.client(iago).post('/users/me/subscriptions', { subscriptions: [{ name: 'Vault' }], invite_only: true });
  const [lobby, annex, hideout] = await Promise.all(['Lobby', 'Annex', 'Hideout'].map((n) => streamId(sys, n)));
  const vault = await streamId(sys, 'Vault', iago);

  t.test('errors and permissions', async (t) => {
    const notAdmin = { result: 'error', msg: 'Must be an organization administrator', code: 'UNAUTHORIZED_PRINCIPAL' };
    const invalid = { result: 'error', msg: 'Invalid channel ID', code: 'BAD_REQUEST' };
    for (const who of [hamlet, polonius]) {
      for (const method of ['post', 'delete'] as const) {
        const r = await sys.client(who)[method]('/default_streams', { stream_id: lobby });
        t.same([r.status, r.body], [400, notAdmin], `${who.full_name}: ${method} refused`);
      }
    }
    t.same((await sys.client(hamlet).post('/default_streams', { stream_id: 999999 })).body, notAdmin, 'the administrator check comes first');
    t.same((await admin.post('/default_streams', { stream_id: 999999 })).body, invalid, 'unknown stream');
    t.same((await admin.delete('/default_streams', { stream_id: 999999 })).body, invalid, 'unknown stream (DELETE)');
    t.same((await admin.post('/default_streams', { stream_id: hideout })).body, invalid, "a private stream the administrator is not in is not revealed");
    t.same((await sys.client(iago).post('/default_streams', { stream_id: vault })).body, { result: 'error', msg: 'Private channels cannot be made default.', code: 'BAD_REQUEST' });
    t.same((await admin.post('/default_streams', {})).body, { result: 'error', msg: "Missing 'stream_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'stream_id' });
    const bad = await admin.post('/default_streams', { stream_id: 'lobby' });
    t.same([bad.status, bad.body], [400, { result: 'error', msg: 'stream_id is not an integer', code: 'BAD_REQUEST', var_name: 'stream_id' }], 'a stream_id that is not a number');
    // Zulip answers success for a stream that is not a default one, private ones included.
    t.same((await admin.delete('/default_streams', { stream_id: hideout })).body, { result: 'success', msg: '' });
    t.same((await admin.delete('/default_streams', { stream_id: annex })).body, { result: 'success', msg: '' });
  });

  t.test('listings, events to non-guests, and what a default stream may no longer do', async (t) => {
    const params = { event_types: ['default_streams'], fetch_event_types: ['default_streams'], client_gravatar: false, apply_markdown: true };
    const events = await verifyAction(t, sys, sys.client(hamlet), () => admin.post('/default_streams', { stream_id: lobby }), { params, expect: ['default_streams'] });
    t.same((events[0]?.default_streams as Json[]).map((s) => s.stream_id), [lobby]);
    await verifyAction(t, sys, sys.client(iago), () => admin.post('/default_streams', { stream_id: annex }), { params, expect: ['default_streams'] });
    t.same(((await sys.client(hamlet).post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams as Json[]).map((s) => s.name).sort(), ['Annex', 'Lobby']);
    const listed = (await sys.client(hamlet).get('/streams', { include_default: true })).body.streams as Json[];
    t.same(listed.filter((s) => s.is_default).map((s) => s.name).sort(), ['Annex', 'Lobby'], 'GET /streams include_default');
    // Adding it again changes nothing and tells nobody.
    await verifyAction(t, sys, sys.client(hamlet), () => admin.post('/default_streams', { stream_id: lobby }), { params, expect: [] });
    // Guests do not see the list and hear nothing of it.
    await verifyAction(t, sys, sys.client(polonius), () => admin.delete('/default_streams', { stream_id: annex }), { params, expect: [] });
    t.same((await sys.client(polonius).post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams, []);
    t.same((await admin.patch(`/streams/${lobby}`, { is_private: true })).body, { result: 'error', msg: 'Default streams cannot be made private.', code: 'BAD_REQUEST' });
    await verifyAction(t, sys, sys.client(hamlet), () => admin.delete('/default_streams', { stream_id: lobby }), { params, expect: ['default_streams'] });
    t.same(((await sys.client(hamlet).post('/register', { fetch_event_types: ['default_streams'] })).body.realm_default_streams as Json[]), []);
  });
});

t.test('new users join the default streams; bots and reactivated users do not', async (t) => {
  const sys = await startSystem(t);
  const { iago, hamlet, othello } = sys.people;
  const owner = sys.client(iago);
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Lobby' }, { name: 'Annex' }] });
  const [lobby, annex] = await Promise.all(['Lobby', 'Annex'].map((n) => streamId(sys, n)));
  // othello leaves before the streams become defaults, and comes back after.
  t.equal((await owner.delete(`/users/${othello.user_id}`)).status, 200);
  for (const id of [lobby, annex]) t.equal((await owner.post('/default_streams', { stream_id: id })).status, 200);

  // hamlet, a subscriber, hears of the newcomer (realm_user) and sees them join (peer_add).
  const params = { event_types: ['realm_user', 'subscription'], include_subscribers: true, client_gravatar: false, apply_markdown: true };
  const events = await verifyAction(t, sys, sys.client(hamlet), () => owner.post('/users', { email: 'laertes@zulip.test', password: 'laertes-pw-123', full_name: 'Laertes' }), {
    params,
    expect: ['realm_user/add', 'subscription/peer_add'],
  });
  const laertesId = (events[0]?.person as Json).user_id as number;
  const peerAdds = events.filter((e) => e.op === 'peer_add');
  t.ok(peerAdds.every((e) => (e.user_ids as number[]).join() === String(laertesId)), 'about the newcomer only');
  t.same(peerAdds.flatMap((e) => e.stream_ids as number[]).sort((a, b) => a - b), [annex, lobby].sort((a, b) => a - b), 'in each default stream');
  const key = await sys.anonymous().post('/fetch_api_key', { username: 'laertes@zulip.test', password: 'laertes-pw-123' });
  const laertes: Account = { user_id: laertesId, email: 'laertes@zulip.test', api_key: key.body.api_key as string, full_name: 'Laertes', password: '' };
  t.same(await subscriptionsOnceIn(sys.client(laertes), 'Lobby'), ['Annex', 'Lobby'], 'the newcomer is in both default streams');
  const subs = (await sys.client(laertes).get('/users/me/subscriptions')).body.subscriptions as Json[];
  t.not(subs[0]?.color, subs[1]?.color, 'each with a color of its own');

  // A guest created by the management path joins them too, as on Zulip.
  const guest = await sys.createUser({ email: 'osric@zulip.test', full_name: 'Osric', role: Role.GUEST });
  t.same(await subscriptionsOnceIn(sys.client(guest), 'Lobby'), ['Annex', 'Lobby'], 'a guest too');

  const bot = await sys.createUser({ email: 'porter-bot@zulip.test', full_name: 'Porter', is_bot: true });
  t.equal((await owner.post(`/users/${othello.user_id}/reactivate`)).status, 200);
  // Events are handled in order: once someone created after them has joined, they were skipped.
  const marker = await sys.createUser({ email: 'reynaldo@zulip.test', full_name: 'Reynaldo' });
  t.same(await subscriptionsOnceIn(sys.client(marker), 'Lobby'), ['Annex', 'Lobby']);
  t.same(await subscribedNames(sys.client(bot)), [], 'a bot joins nothing');
  t.same(await subscribedNames(sys.client(othello)), [], 'a reactivated user is not subscribed anew');
  const members = (await owner.get(`/streams/${lobby}/members`)).body.subscribers as number[];
  t.same([...members].sort((a, b) => a - b), [hamlet.user_id, laertesId, guest.user_id, marker.user_id].sort((a, b) => a - b));
});

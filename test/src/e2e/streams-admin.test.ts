/**
 * Stream membership reads and stream administration end to end: GET /streams/{id}/members,
 * GET /users/{user_id}/subscriptions/{stream_id}, with Zulip's access rules (administrators
 * see private streams' membership; guests only their own streams) and errors.
 */
import t, { type Test } from 'tap';
import { startSystem } from '../harness.js';
import type { Msg } from './messages-fixtures.js';

t.test('stream membership and administration', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  const ok = async (r: Promise<{ status: number; body: Msg }>) => {
    const res = await r;
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  const idOf = async (name: string) => (await ok(sys.client(iago).get('/get_stream_id', { stream: name }))).stream_id as number;
  const expectError = (t: Test, r: { status: number; body: Msg }, msg: string) => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };
  await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }], principals: [hamlet.user_id, othello.user_id] }));
  await ok(sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Hideout' }], principals: [hamlet.user_id, polonius.user_id], invite_only: true }));
  const verona = await idOf('Verona');
  const hideout = (await ok(sys.client(hamlet).get('/get_stream_id', { stream: 'Hideout' }))).stream_id as number;

  t.test('GET /streams/{id}/members', async (t) => {
    t.same(await ok(sys.client(desdemona).get(`/streams/${verona}/members`)), { result: 'success', msg: '', subscribers: [hamlet.user_id, othello.user_id].sort((a, b) => a - b) });
    t.same((await ok(sys.client(iago).get(`/streams/${hideout}/members`))).subscribers, [hamlet.user_id, polonius.user_id].sort((a, b) => a - b), 'an administrator sees a private stream');
    t.same((await ok(sys.client(polonius).get(`/streams/${hideout}/members`))).subscribers.length, 2, 'a guest sees their own stream');
    expectError(t, await sys.client(othello).get(`/streams/${hideout}/members`), 'Invalid channel ID');
    expectError(t, await sys.client(polonius).get(`/streams/${verona}/members`), 'Invalid channel ID');
    expectError(t, await sys.client(hamlet).get('/streams/999999/members'), 'Invalid channel ID');
  });

  t.test('GET /users/{user_id}/subscriptions/{stream_id}', async (t) => {
    t.same(await ok(sys.client(othello).get(`/users/${hamlet.user_id}/subscriptions/${verona}`)), { result: 'success', msg: '', is_subscribed: true });
    t.same((await ok(sys.client(othello).get(`/users/${iago.user_id}/subscriptions/${verona}`))).is_subscribed, false);
    t.same((await ok(sys.client(iago).get(`/users/${polonius.user_id}/subscriptions/${hideout}`))).is_subscribed, true, 'an administrator asks about a private stream');
    expectError(t, await sys.client(othello).get(`/users/${hamlet.user_id}/subscriptions/${hideout}`), 'Invalid channel ID');
    expectError(t, await sys.client(othello).get(`/users/999999/subscriptions/${verona}`), 'No such user');
    expectError(t, await sys.client(othello).get(`/users/999999/subscriptions/999999`), 'No such user');
  });
});

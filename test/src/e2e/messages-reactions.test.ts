/**
 * POST and DELETE /messages/{id}/reactions end to end: names, codes and types with Zulip's
 * errors, votes taking the first reaction's name, `reactions` on Message objects, and who
 * gets `reaction` events — never anyone who cannot read the message (private streams,
 * all_public_streams queues).
 */
import t, { type Test } from 'tap';
import type { Account } from '../harness.js';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('reactions', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  await w.createStream('Verona', [hamlet.user_id, othello.user_id]);
  await w.createStream('Secret', [desdemona.user_id, hamlet.user_id], { invite_only: true });

  const send = async (who: Account, to: string, content: string) => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to, topic: 'reactions', content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const react = (who: Account, id: number | string, p: Record<string, string>) => sys.client(who).post(`/messages/${id}/reactions`, p);
  const unreact = (who: Account, id: number | string, p: Record<string, string>) => sys.client(who).delete(`/messages/${id}/reactions`, p);
  const reactionsOf = async (who: Account, id: number) => {
    const r = await sys.client(who).get(`/messages/${id}`);
    return (r.body.message as Msg).reactions as Msg[];
  };
  const expectError = (t: Test, r: { status: number; body: Msg }, msg: string, code = 'BAD_REQUEST') => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code });
  };

  t.test('a reaction by name shows on the message and can be removed by name or by code', async (t) => {
    const id = await send(hamlet, 'Verona', 'good news');
    t.same((await react(othello, id, { emoji_name: 'tada' })).body, { result: 'success', msg: '' });
    t.same(await reactionsOf(hamlet, id), [
      { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'unicode_emoji', user_id: othello.user_id, user: { id: othello.user_id, email: othello.email, full_name: othello.full_name } },
    ]);
    const history = await sys.client(hamlet).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['stream', 'Verona']] } as never);
    t.match((history.body.messages as Msg[])[0]?.reactions, [{ emoji_code: '1f389', user_id: othello.user_id }], 'GET /messages carries them too');

    t.equal((await unreact(othello, id, { emoji_name: 'tada' })).status, 200);
    t.same(await reactionsOf(hamlet, id), []);
    await react(othello, id, { emoji_name: 'tada' });
    t.equal((await unreact(othello, id, { emoji_code: '1f389', reaction_type: 'unicode_emoji' })).status, 200, 'by code and type');
    t.same(await reactionsOf(hamlet, id), []);
  });

  t.test('the same emoji from a second user is a vote under the first name', async (t) => {
    const id = await send(hamlet, 'Verona', 'vote');
    await react(hamlet, id, { emoji_name: 'thumbs_up' });
    t.equal((await react(othello, id, { emoji_name: '+1' })).status, 200);
    const rs = await reactionsOf(hamlet, id);
    t.same(rs.map((r) => [r.user_id, r.emoji_name, r.emoji_code]), [
      [hamlet.user_id, 'thumbs_up', '1f44d'],
      [othello.user_id, 'thumbs_up', '1f44d'],
    ]);
    expectError(t, await react(othello, id, { emoji_name: 'like' }), 'Reaction already exists.', 'REACTION_ALREADY_EXISTS');
    t.equal((await unreact(othello, id, { emoji_name: 'like' })).status, 200, 'any name of the emoji removes it');
    t.equal((await reactionsOf(hamlet, id)).length, 1);
  });

  t.test("Zulip's errors", async (t) => {
    const id = await send(hamlet, 'Verona', 'errors');
    const before = await reactionsOf(hamlet, id);
    expectError(t, await react(hamlet, id, { emoji_name: 'no_such_emoji' }), "Emoji 'no_such_emoji' does not exist");
    expectError(t, await react(hamlet, id, { emoji_name: 'tada', emoji_code: 'fffff', reaction_type: 'unicode_emoji' }), 'Invalid emoji code.');
    expectError(t, await react(hamlet, id, { emoji_name: 'heart', emoji_code: '1f389', reaction_type: 'unicode_emoji' }), 'Invalid emoji name.');
    expectError(t, await react(hamlet, id, { emoji_name: 'zulip', emoji_code: 'other', reaction_type: 'zulip_extra_emoji' }), 'Invalid emoji code.');
    expectError(t, await react(hamlet, id, { emoji_name: 'other', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }), 'Invalid emoji name.');
    expectError(t, await react(hamlet, id, { emoji_name: 'party', emoji_code: '1', reaction_type: 'realm_emoji' }), 'Invalid custom emoji.');
    expectError(t, await react(hamlet, id, { emoji_name: 'tada', emoji_code: '1f389', reaction_type: 'sticker' }), 'Invalid emoji type.');
    const missing = await sys.client(hamlet).post(`/messages/${id}/reactions`, {});
    t.equal(missing.status, 400);
    t.match(missing.body, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'emoji_name' argument" });
    expectError(t, await react(hamlet, 99999999, { emoji_name: 'tada' }), 'Invalid message(s)');
    expectError(t, await react(hamlet, 'abc', { emoji_name: 'tada' }), 'Invalid message(s)');
    t.same(await reactionsOf(hamlet, id), before, 'nothing changed');

    expectError(t, await unreact(hamlet, id, {}), 'At least one of the following arguments must be present: emoji_name, emoji_code');
    expectError(t, await unreact(hamlet, id, { emoji_name: 'tada' }), "Reaction doesn't exist.", 'REACTION_DOES_NOT_EXIST');
    expectError(t, await unreact(hamlet, id, { emoji_name: 'no_such_emoji' }), "Emoji 'no_such_emoji' does not exist");

    t.equal((await react(hamlet, id, { emoji_name: 'zulip' })).status, 200, 'the zulip extra emoji by name');
    t.match(await reactionsOf(hamlet, id), [{ emoji_name: 'zulip', emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' }]);
    t.equal((await unreact(hamlet, id, { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' })).status, 200);
  });

  t.test('a message one cannot read cannot be reacted to', async (t) => {
    const secret = await send(desdemona, 'Secret', 'between us');
    expectError(t, await react(othello, secret, { emoji_name: 'tada' }), 'Invalid message(s)');
    expectError(t, await react(polonius, secret, { emoji_name: 'tada' }), 'Invalid message(s)');
    const open = await send(hamlet, 'Verona', 'guests only see what they are subscribed to');
    expectError(t, await react(polonius, open, { emoji_name: 'tada' }), 'Invalid message(s)');
    await react(hamlet, secret, { emoji_name: 'tada' });
    expectError(t, await unreact(othello, secret, { emoji_name: 'tada' }), 'Invalid message(s)');
  });

  t.test('reaction events reach those who can read the message and no one else', async (t) => {
    const params = { event_types: ['reaction'] };
    const { poller: hamletQ } = await QueuePoller.register(sys.client(hamlet), params);
    const { poller: othelloQ } = await QueuePoller.register(sys.client(othello), params);
    // iago is subscribed to neither stream; his all_public_streams queue sees public streams only.
    const { poller: iagoAll } = await QueuePoller.register(sys.client(iago), { ...params, all_public_streams: true });
    const { poller: iagoOwn } = await QueuePoller.register(sys.client(iago), params);

    const secret = await send(desdemona, 'Secret', 'hush');
    t.equal((await react(hamlet, secret, { emoji_name: 'heart' })).status, 200);
    const open = await send(othello, 'Verona', 'loud');
    t.equal((await react(hamlet, open, { emoji_name: 'heart' })).status, 200);
    t.equal((await unreact(hamlet, open, { emoji_name: 'heart' })).status, 200);

    const mine = await hamletQ.collect(3);
    t.same(mine.map((e) => [e.op, e.message_id]), [['add', secret], ['add', open], ['remove', open]]);
    t.same(mine[0], {
      id: mine[0]?.id,
      type: 'reaction',
      op: 'add',
      message_id: secret,
      user_id: hamlet.user_id,
      user: { user_id: hamlet.user_id, email: hamlet.email, full_name: hamlet.full_name },
      emoji_name: 'heart',
      emoji_code: '2764',
      reaction_type: 'unicode_emoji',
    });
    t.same((await othelloQ.collect(2)).map((e) => [e.op, e.message_id]), [['add', open], ['remove', open]], 'othello: only the public stream');
    t.same((await iagoAll.collect(2)).map((e) => [e.op, e.message_id]), [['add', open], ['remove', open]], 'all_public_streams: only the public stream');
    // Everything has been delivered by now (each queue gets events in commit order).
    t.same(await iagoOwn.drain(), [], 'a queue without all_public_streams of a non-subscriber: nothing');
    t.same(await othelloQ.drain(), [], 'no private stream reaction reached othello');
    t.same(await iagoAll.drain(), [], 'nor the all_public_streams queue');
  });

  t.test('a former subscriber of a private stream hears of no more reactions there', async (t) => {
    await w.createStream('Closet', [desdemona.user_id, othello.user_id], { invite_only: true });
    const id = await send(desdemona, 'Closet', 'before you left');
    await w.unsubscribe('Closet', [othello.user_id]);
    const { poller } = await QueuePoller.register(sys.client(othello), { event_types: ['reaction', 'message'] });
    await react(desdemona, id, { emoji_name: 'tada' });
    const marker = (await sys.client(desdemona).post('/messages', { type: 'private', to: [othello.user_id], content: 'marker' })).body.id as number;
    const got = await poller.collect(1);
    t.same(got.map((e) => e.type), ['message'], 'only the marker');
    t.equal((got[0]?.message as Msg).id, marker);
  });

  t.test('reacting to a public stream message one never received', async (t) => {
    const id = await send(hamlet, 'Verona', 'iago was not here');
    t.equal((await react(iago, id, { emoji_name: 'tada' })).status, 200);
    const r = await sys.client(iago).get(`/messages/${id}`);
    t.same((r.body.message as Msg).flags, ['read', 'historical'], 'gets a historical row, so later events reach him');
    const { poller } = await QueuePoller.register(sys.client(iago), { event_types: ['reaction'] });
    await react(othello, id, { emoji_name: 'tada' });
    t.match(await poller.collect(1), [{ op: 'add', message_id: id, user_id: othello.user_id }]);
  });
  t.test('a direct message: its reactions reach its participants only', async (t) => {
    const dm = (await sys.client(hamlet).post('/messages', { type: 'private', to: [othello.user_id], content: 'between us two' })).body.id as number;
    const params = { event_types: ['reaction'] };
    const { poller: othelloQ } = await QueuePoller.register(sys.client(othello), params);
    const { poller: iagoAll } = await QueuePoller.register(sys.client(iago), { ...params, all_public_streams: true });
    const { poller: desdemonaQ } = await QueuePoller.register(sys.client(desdemona), params);
    expectError(t, await react(iago, dm, { emoji_name: 'eyes' }), 'Invalid message(s)');
    expectError(t, await react(polonius, dm, { emoji_name: 'eyes' }), 'Invalid message(s)');
    t.equal((await react(hamlet, dm, { emoji_name: 'heart' })).status, 200);
    // An administrator has no way into a direct message either.
    expectError(t, await unreact(desdemona, dm, { emoji_name: 'heart' }), 'Invalid message(s)');
    t.match(await othelloQ.collect(1), [{ type: 'reaction', op: 'add', message_id: dm, user_id: hamlet.user_id }]);
    // A marker in a public stream: each queue gets events in commit order, so by its arrival the DM's reaction would have come.
    const marker = await send(othello, 'Verona', 'marker');
    t.equal((await react(othello, marker, { emoji_name: 'heart' })).status, 200);
    t.same((await iagoAll.collect(1)).map((e) => e.message_id), [marker], 'the all_public_streams queue: only the public reaction');
    t.same(await desdemonaQ.drain(), [], 'nothing for a third person');
    const seen = (await sys.client(iago).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).body.messages as Msg[];
    t.notOk(seen.some((m) => m.id === dm), 'nor the message with its reactions in anyone else’s history');
  });
});

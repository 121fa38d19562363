/**
 * Event-path authorization (issue 13): events reach a queue only when its user may read what
 * they are about, as strictly as the read paths decide it.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

t.test('events are authorized for their recipient', async (t) => {
  const sys = await startSystem(t);
  const { iago, hamlet, othello, polonius } = sys.people;
  const h = sys.client(hamlet);

  t.test('a guest may not register for every public stream', async (t) => {
    const r = await sys.client(polonius).post('/register', { event_types: ['message'], all_public_streams: true });
    t.equal(r.status, 400);
    t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'User not authorized for this query' });
    const member = await sys.client(othello).post('/register', { event_types: ['message'], all_public_streams: true });
    t.equal(member.status, 200, 'a member may');
    await sys.client(othello).delete('/events', { queue_id: member.body.queue_id as string });
  });

  t.test('someone removed from a private stream hears no more of its messages (CVE-2024-27286)', async (t) => {
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], invite_only: true, principals: [iago.user_id, hamlet.user_id, othello.user_id] });
    const sent = (await h.post('/messages', { type: 'stream', to: 'Secret', topic: 'plans', content: 'before' })).body.id as number;
    const { poller } = await QueuePoller.register(sys.client(othello), { event_types: ['message', 'update_message', 'reaction', 'delete_message'] });
    const removed = await sys.client(iago).delete('/users/me/subscriptions', { subscriptions: ['Secret'], principals: [othello.user_id] });
    t.equal(removed.status, 200);
    t.same(removed.body.removed, ['Secret']);

    t.equal((await h.patch(`/messages/${sent}`, { content: 'after: the real plans' })).status, 200);
    t.equal((await h.post(`/messages/${sent}/reactions`, { emoji_name: 'smile' })).status, 200);
    t.equal((await h.patch(`/messages/${sent}`, { topic: 'new plans' })).status, 200);
    t.equal((await sys.client(iago).delete(`/messages/${sent}`)).status, 200);
    const marker = (await h.post('/messages', { type: 'private', to: [othello.user_id], content: 'the end' })).body.id as number;

    const events = await poller.collect(1);
    t.same(events.map((e) => [e.type, (e.message as { id?: number } | undefined)?.id]), [['message', marker]], 'only the marker: no edit, reaction or deletion');
  });

  t.test('a member demoted to guest loses their all_public_streams queues, parked polls included', async (t) => {
    const laertes = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes' });
    const l = sys.client(laertes);
    await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Market square' }] });
    const everything = await l.post('/register', { event_types: ['message', 'update_message'], all_public_streams: true });
    t.equal(everything.status, 200);
    const { poller: own } = await QueuePoller.register(l, { event_types: ['message', 'realm_user'] });
    const sent = (await h.post('/messages', { type: 'stream', to: 'Market square', topic: 't', content: 'while a member' })).body.id as number;
    const first = await l.get('/events', { queue_id: everything.body.queue_id as string, last_event_id: everything.body.last_event_id as number });
    t.match(first.body, { result: 'success', events: [{ type: 'message', message: { id: sent } }] }, 'a member hears the public stream');
    const lastId = (first.body.events as Array<{ id: number }>)[0]?.id as number;

    // Parked before the demotion, it would otherwise hear the next public message.
    const parked = l.get('/events', { queue_id: everything.body.queue_id as string, last_event_id: lastId });
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await sys.client(iago).patch(`/users/${laertes.user_id}`, { role: 600 })).status, 200);
    const ended = await parked;
    t.equal(ended.status, 400, 'the parked poll ends when the demotion answers');
    t.match(ended.body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID', queue_id: everything.body.queue_id });

    await h.post('/messages', { type: 'stream', to: 'Market square', topic: 't', content: 'after the demotion' });
    await h.patch(`/messages/${sent}`, { content: 'edited after the demotion' });
    const again = await l.get('/events', { queue_id: everything.body.queue_id as string, last_event_id: lastId, dont_block: true });
    t.match(again.body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID' }, 'the queue is gone for good');
    const refused = await l.post('/register', { event_types: ['message'], all_public_streams: true });
    t.match(refused.body, { result: 'error', msg: 'User not authorized for this query' }, 'and a new one is refused');

    const marker = (await h.post('/messages', { type: 'private', to: [laertes.user_id], content: 'the end' })).body.id as number;
    const events = await own.collect(2);
    t.same(
      events.map((e) => e.type === 'message' ? ['message', (e.message as { id: number }).id] : [e.type, (e.person as { role?: number }).role]),
      [['realm_user', 600], ['message', marker]],
      'the ordinary queue stays and hears only what a guest may read',
    );
  });

  t.test('a deactivated user keeps no queue to come back to', async (t) => {
    const ophelia = await sys.createUser({ email: 'ophelia@zulip.test', full_name: 'Ophelia' });
    const o = sys.client(ophelia);
    const q = await o.post('/register', { event_types: ['message'] });
    t.equal(q.status, 200);
    const parked = o.get('/events', { queue_id: q.body.queue_id as string, last_event_id: q.body.last_event_id as number });
    await new Promise((r) => setTimeout(r, 300));
    t.equal((await sys.client(iago).delete(`/users/${ophelia.user_id}`)).status, 200);
    t.match((await parked).body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID' }, 'the parked poll ends at the deactivation');
    t.equal((await sys.client(iago).post(`/users/${ophelia.user_id}/reactivate`)).status, 200);
    const back = await o.get('/events', { queue_id: q.body.queue_id as string, last_event_id: q.body.last_event_id as number, dont_block: true });
    t.match(back.body, { result: 'error', code: 'BAD_EVENT_QUEUE_ID' }, 'reactivated, the old queue does not come back');
  });
});

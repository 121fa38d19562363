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
});

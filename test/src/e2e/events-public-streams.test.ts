import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

t.test('all_public_streams queues get messages of public streams they are not subscribed to', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello } = sys.people;
  const h = sys.client(hamlet);
  await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Open court' }] });
  await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Closet' }], invite_only: true });

  const { poller: everything } = await QueuePoller.register(sys.client(othello), { event_types: ['message', 'update_message'], all_public_streams: true });
  const { poller: ownOnly } = await QueuePoller.register(sys.client(othello), { event_types: ['message'] });

  const open = (await h.post('/messages', { type: 'stream', to: 'Open court', topic: 'news', content: 'for all to see' })).body.id as number;
  await h.post('/messages', { type: 'stream', to: 'Closet', topic: 'news', content: 'for me alone' });
  const marker = (await h.post('/messages', { type: 'private', to: [othello.user_id], content: 'the end' })).body.id as number;

  const seen = (await everything.collect(2)).map((e) => (e.message as { id: number }).id);
  t.same(seen, [open, marker], 'the public stream message and the DM, never the private stream message');
  const own = (await ownOnly.collect(1)).map((e) => (e.message as { id: number }).id);
  t.same(own, [marker], 'a queue without all_public_streams gets only what othello receives');

  const edit = await h.patch(`/messages/${open}`, { content: 'for all to see, edited' });
  t.equal(edit.status, 200);
  const [update] = await everything.collect(1);
  t.match(update, { type: 'update_message', message_id: open, content: 'for all to see, edited' }, 'and edits of public stream messages');
});

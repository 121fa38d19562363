/**
 * Someone who signs up joins the default streams and finds their recent conversation in their
 * own message list (Zulip's add_new_user_history): the public default streams' messages of
 * the last week, up to 1,000, the newest 20 unread and the rest read. Streams they were not
 * put in, older messages and bots get nothing.
 */
import t from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem } from '../harness.js';
import { streamId, subscriptionsOnceIn } from './default-streams-support.js';

type Msg = { id: number; flags: string[]; display_recipient: unknown; content: string };

t.test("a new user gets the default streams' recent history", async (t) => {
  const sys = await startSystem(t);
  const { hamlet, desdemona } = sys.people;
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Lobby' }, { name: 'Annex' }] });
  t.equal((await sys.client(desdemona).post('/default_streams', { stream_id: await streamId(sys, 'Lobby') })).status, 200, 'Lobby is a default stream');
  const send = async (to: string, content: string) => (await sys.client(hamlet).post('/messages', { type: 'stream', to, topic: 'chatter', content })).body.id as number;
  const lobby: number[] = [];
  for (let i = 0; i < 25; i++) lobby.push(await send('Lobby', `lobby ${i}`));
  for (let i = 0; i < 3; i++) await send('Annex', `annex ${i}`);
  // A week and a day old: too old to be handed over.
  await db.query("UPDATE messages.message SET date_sent = now() - interval '8 days' WHERE id = $1", [lobby[0]]);

  const laertes = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes' });
  const porter = await sys.createUser({ email: 'porter-bot@zulip.test', full_name: 'Porter', is_bot: true });
  t.same(await subscriptionsOnceIn(sys.client(laertes), 'Lobby'), ['Lobby'], 'Laertes joined the default stream');
  const own = async (who: typeof laertes) =>
    ((await sys.client(who).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0 })).body.messages as Msg[]) ?? [];
  for (let i = 0; i < 100 && (await own(laertes)).length === 0; i++) await new Promise((r) => setTimeout(r, 50));

  const mine = await own(laertes);
  t.same(mine.map((m) => m.id), lobby.slice(1), "the default stream's last week, and nothing of the stream they are not in");
  t.same(mine.filter((m) => !m.flags.includes('read')).map((m) => m.id), lobby.slice(-20), 'the newest 20 unread');
  t.ok(mine.slice(0, 4).every((m) => m.flags.includes('read') && !m.flags.includes('historical')), 'older ones read, and their own (not historical)');
  const reg = await sys.client(laertes).post('/register', { fetch_event_types: ['message', 'update_message_flags'] });
  t.equal((reg.body.unread_msgs as { count: number }).count, 20, 'unread counts include them');
  t.same(await own(porter), [], 'a bot gets no history');

  // Later messages reach them as to any subscriber.
  const later = await send('Lobby', 'welcome, Laertes');
  t.match((await own(laertes)).at(-1), { id: later, flags: [] }, 'a new message arrives unread');
});

/**
 * With ZC_NEW_REALM_STREAMS (on by default, as on Zulip) a new realm starts with its "general"
 * stream: public, a default stream every new human user joins, and the realm's notifications
 * stream, where the notification bot announces new streams.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { streamId, subscribedNames, subscriptionsOnceIn } from './default-streams-support.js';
import { verifyAction } from './events-verify.js';

type Json = Record<string, unknown>;

t.test('a new realm has its "general" stream, a default stream everyone joins', async (t) => {
  const sys = await startSystem(t, { config: { newRealmStreams: true } });
  const { iago, hamlet, polonius } = sys.people;
  for (const who of [iago, hamlet, polonius]) {
    t.same(await subscriptionsOnceIn(sys.client(who), 'general'), ['general'], `${who.full_name} is in general`);
  }
  const general = await streamId(sys, 'general');
  const notificationsStream = async () => (await sys.client(hamlet).post('/register', { fetch_event_types: ['realm'] })).body.realm_notifications_stream_id;
  for (let i = 0; i < 60 && (await notificationsStream()) !== general; i++) await new Promise((r) => setTimeout(r, 50));
  t.equal(await notificationsStream(), general, "the realm's notifications stream, as on Zulip");
  const reg = (await sys.client(hamlet).post('/register', { fetch_event_types: ['default_streams', 'stream'] })).body;
  t.match(reg.realm_default_streams, [{ stream_id: general, name: 'general', invite_only: false, is_web_public: false, history_public_to_subscribers: true }]);
  t.match((reg.streams as Json[]).find((s) => s.stream_id === general), { description: /default/, rendered_description: /<p>/ });
  // Its first posts (Welcome Bot's; this realm has none, with ZC_WELCOME_MESSAGES off, so the notification bot's), once.
  const firstPosts = async () =>
    ((await sys.client(hamlet).get('/messages', { anchor: 'oldest', num_before: 0, num_after: 10, narrow: JSON.stringify([{ operator: 'stream', operand: 'general' }]) })).body.messages as Json[]) ?? [];
  for (let i = 0; i < 60 && (await firstPosts()).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
  t.match((await firstPosts()).map((m) => [m.sender_full_name, m.subject]), [['Notification Bot', 'greetings'], ['Notification Bot', 'how topics work']], 'general is not empty');
  t.match((await firstPosts())[0], { content: /<a class="stream"[^>]*>#general<\/a>/ }, 'the stream link rendered');
  const bot = await sys.createUser({ email: 'porter-bot@zulip.test', full_name: 'Porter', is_bot: true });
  const marker = await sys.createUser({ email: 'laertes@zulip.test', full_name: 'Laertes' });
  t.same(await subscriptionsOnceIn(sys.client(marker), 'general'), ['general'], 'a user created later joins it');
  t.same(await subscribedNames(sys.client(bot)), [], 'a bot does not');

  // The notification bot's "new stream" announcements go to the notifications stream.
  const announcements = async (stream: string): Promise<Json[]> => {
    const narrow = JSON.stringify([{ operator: 'stream', operand: stream }, { operator: 'topic', operand: 'new streams' }]);
    for (let i = 0; i < 60; i++) {
      const found = ((await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow })).body.messages as Json[]) ?? [];
      if (found.length > 0) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    return [];
  };
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Battlements' }], announce: true });
  const [announced] = await announcements('general');
  t.match(announced, { sender_full_name: 'Notification Bot', content: /Battlements/ });
  // As Zulip (mark_as_read=[the creator]): read by the one who created the stream, unread for the others.
  const flagsOf = async (who: typeof hamlet) => ((await sys.client(who).get(`/messages/${String(announced?.id)}`)).body.message as Json).flags;
  t.same(await flagsOf(hamlet), ['read'], "the creator's own news is read");
  t.same(await flagsOf(iago), [], 'unread for everyone else');
  // Another one chosen a moment before the next announcement is used at once.
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Town crier' }] });
  const crier = await streamId(sys, 'Town crier');
  t.match((await sys.client(iago).patch('/realm', { notifications_stream_id: crier })).body, { result: 'success' });
  await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Ramparts' }], announce: true });
  t.match(await announcements('Town crier'), [{ sender_full_name: 'Notification Bot', content: /Ramparts/ }], 'announced in the new notifications stream');
  t.equal((await announcements('general')).length, 1, 'not in general');

  // Archived, it is nobody's notifications stream any more (Zulip shows none for a deactivated one).
  const params = { event_types: ['realm'], fetch_event_types: ['realm'], client_gravatar: false, apply_markdown: true };
  const events = await verifyAction(t, sys, sys.client(hamlet), () => sys.client(iago).delete(`/streams/${crier}`), { params, expect: ['realm/update'] });
  t.match(events, [{ property: 'notifications_stream_id', value: -1 }]);
  t.equal(await notificationsStream(), -1);
});

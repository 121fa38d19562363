/**
 * The subscriptions the server makes from the users service's events: a new realm's
 * "general" stream and a new user's default streams. Both run from a durable consumer, so a
 * redelivered event must change nothing and send nothing.
 */
import t from 'tap';
import { doCreateRealmStreams, doSubscribeNewUser } from '../../src/actions/initial-subscriptions.js';
import { streamStore } from '../../src/store/stream-store.js';
import { subscriptionStore } from '../../src/store/subscription-store.js';
import { REALM_ID, personRecord, realmRecord, subscriptionsTestDb } from '../helpers.js';

const REALM = realmRecord();

const eventTypes = (rows: Array<{ subject: string; payload: Record<string, unknown> }>) =>
  rows.map((r) => (r.subject.endsWith('notify') ? `${(r.payload.event as { type: string; op?: string }).type}/${(r.payload.event as { op?: string }).op ?? ''}` : r.subject));

t.test('a new realm gets "general", once', async (t) => {
  const off = await subscriptionsTestDb(t);
  await doCreateRealmStreams(off.deps, REALM);
  t.same(await streamStore.listByRealm(off.pool, REALM_ID), [], 'nothing with ZC_NEW_REALM_STREAMS=false');

  const db = await subscriptionsTestDb(t, { newRealmStreams: true });
  await doCreateRealmStreams(db.deps, REALM);
  const [general, ...others] = await streamStore.listByRealm(db.pool, REALM_ID);
  t.same(others, []);
  t.match(general, { name: 'general', invite_only: false, is_web_public: false, history_public_to_subscribers: true, creator_id: null });
  t.same(await streamStore.listDefaultStreamIds(db.pool, REALM_ID), [general?.id], 'a default stream');
  const written = await db.outbox();
  t.same(eventTypes(written), [
    'subscriptions.evt.v1.stream.created',
    'stream/create',
    'default_streams/',
    'users.inbox.v1.realm_notifications_stream',
    'subscriptions.evt.v1.notification_bot.message',
    'subscriptions.evt.v1.notification_bot.message',
  ]);
  t.same(written[3]?.payload, { realm_id: REALM_ID, stream_id: general?.id }, 'the users service makes it the notifications stream');
  t.match(written.slice(4).map((r) => r.payload), [
    { realm_id: REALM_ID, sender: 'welcome-bot', key: `general-welcome:${general?.id}:0`, to: { type: 'stream', stream_id: general?.id, topic: 'greetings' } },
    { realm_id: REALM_ID, sender: 'welcome-bot', key: `general-welcome:${general?.id}:1`, to: { type: 'stream', stream_id: general?.id, topic: 'how topics work' } },
  ], "Welcome Bot's first posts in it, each with a key of its own");

  // Renamed since, then the event comes again: no second "general".
  await streamStore.update(db.pool, REALM_ID, general?.id as number, { name: 'Great hall' });
  await db.clearOutbox();
  await doCreateRealmStreams(db.deps, REALM);
  t.same((await streamStore.listByRealm(db.pool, REALM_ID)).map((s) => s.name), ['Great hall']);
  t.same(await db.outbox(), [], 'nothing written');
});

t.test('a new user joins the default streams, once', async (t) => {
  const db = await subscriptionsTestDb(t, { newRealmStreams: true });
  await doCreateRealmStreams(db.deps, REALM);
  const general = (await streamStore.findByName(db.pool, REALM_ID, 'general'))?.id as number;
  const laertes = personRecord(10, 'laertes', 400);
  const bot = { ...personRecord(11, 'porter', 400), is_bot: true, bot_type: 1 };
  await db.deps.directory.store.upsertUsers(db.pool, [laertes, bot]);
  await db.clearOutbox();

  await doSubscribeNewUser(db.deps, laertes);
  t.same((await subscriptionStore.listRows(db.pool, [laertes.user_id], [general])).map((r) => r.active), [true]);
  const rows = await db.outbox();
  t.same(eventTypes(rows), ['subscriptions.evt.v1.subscribers.added', 'subscription/add', 'subscription/peer_add', 'messages.inbox.v1.new_user_history']);
  t.same(rows[1]?.payload.users, [laertes.user_id]);
  t.same(rows[2]?.payload.users, [1, 2, 3, 4, 11], "peer_add to the realm's other non-guests, who see a public stream's subscribers");
  t.same(rows[3]?.payload, { realm_id: REALM_ID, user_id: laertes.user_id, stream_ids: [general] }, "the messages service gives them the streams' recent history");

  await db.clearOutbox();
  await doSubscribeNewUser(db.deps, laertes);
  t.same(await db.outbox(), [], 'a redelivery writes nothing');

  // Left since: a redelivery does not bring them back.
  await subscriptionStore.deactivate(db.pool, [{ user_id: laertes.user_id, stream_id: general }]);
  await doSubscribeNewUser(db.deps, laertes);
  t.same((await subscriptionStore.listRows(db.pool, [laertes.user_id], [general])).map((r) => r.active), [false]);

  await doSubscribeNewUser(db.deps, bot);
  t.same(await subscriptionStore.listRows(db.pool, [bot.user_id], [general]), [], 'bots join nothing');
  t.same(await db.outbox(), []);
});

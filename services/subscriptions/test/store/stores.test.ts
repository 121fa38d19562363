/** The stores against real PostgreSQL: constraints, upserts and the questions each method answers. */
import t from 'tap';
import { isUniqueViolation } from '@zc/shared/db';
import { streamStatsStore } from '../../src/store/stream-stats-store.js';
import { streamStore, type NewStream } from '../../src/store/stream-store.js';
import { subscriptionStore } from '../../src/store/subscription-store.js';
import { userTopicStore } from '../../src/store/user-topic-store.js';
import { REALM_ID, personRecord, subscriptionsTestDb } from '../helpers.js';

const stream = (name: string, extra: Partial<NewStream> = {}): NewStream => ({
  realm_id: REALM_ID,
  name,
  description: '',
  rendered_description: '',
  invite_only: false,
  is_web_public: false,
  history_public_to_subscribers: true,
  stream_post_policy: 1,
  message_retention_days: null,
  creator_id: null,
  can_remove_subscribers_group_id: 13,
  email_token: 'tok',
  ...extra,
});

t.test('subscriptions stores', async (t) => {
  const db = await subscriptionsTestDb(t);
  const { pool } = db;
  const { member, other } = db.people;

  t.test('stream names are unique in a realm regardless of case', async (t) => {
    const verona = await streamStore.insert(pool, stream('Verona'));
    t.match(verona, { id: Number, name: 'Verona', is_archived: false, date_created: Date });
    const dup = await streamStore.insert(pool, stream('VERONA')).catch((e: unknown) => e);
    t.ok(isUniqueViolation(dup));
    await streamStore.insert(pool, stream('Verona', { realm_id: REALM_ID + 1 }));
    t.equal((await streamStore.findByName(pool, REALM_ID, 'vErOnA'))?.id, verona.id);
    t.equal(await streamStore.findByName(pool, REALM_ID, 'Mantua'), undefined);
    t.same((await streamStore.listByNames(pool, REALM_ID, ['VERONA', 'Mantua'])).map((s) => s.id), [verona.id]);
    t.equal(await streamStore.findById(pool, REALM_ID + 1, verona.id), undefined, 'ids are looked up within the realm');
  });

  t.test('activate reports only what changed; reactivation keeps the settings', async (t) => {
    const s = await streamStore.insert(pool, stream('Elsinore'));
    const first = await subscriptionStore.activate(pool, [
      { user_id: member.id, stream_id: s.id, realm_id: REALM_ID, color: '#111111' },
      { user_id: other.id, stream_id: s.id, realm_id: REALM_ID, color: '#222222' },
    ]);
    t.same(first.map((p) => p.user_id).sort(), [member.id, other.id]);
    t.same(await subscriptionStore.activate(pool, [{ user_id: member.id, stream_id: s.id, realm_id: REALM_ID, color: '#333333' }]), [], 'already active');
    await subscriptionStore.setProperty(pool, member.id, s.id, 'is_muted', true);
    t.same(await subscriptionStore.deactivate(pool, [{ user_id: member.id, stream_id: s.id }]), [{ user_id: member.id, stream_id: s.id }]);
    t.same(await subscriptionStore.deactivate(pool, [{ user_id: member.id, stream_id: s.id }]), [], 'already inactive');
    t.same((await subscriptionStore.listSubscriberIds(pool, [s.id])).get(s.id), [other.id]);
    t.same(await subscriptionStore.activate(pool, [{ user_id: member.id, stream_id: s.id, realm_id: REALM_ID, color: '#444444' }]), [{ user_id: member.id, stream_id: s.id }]);
    t.match(await subscriptionStore.find(pool, member.id, s.id), { active: true, color: '#111111', is_muted: true, desktop_notifications: null });
    t.same((await subscriptionStore.listColors(pool, [member.id])).map((c) => c.color), ['#111111']);
  });

  t.test('deactivated users are not subscribers', async (t) => {
    const s = await streamStore.insert(pool, stream('Ghosts'));
    await subscriptionStore.activate(pool, [
      { user_id: member.id, stream_id: s.id, realm_id: REALM_ID, color: '#111111' },
      { user_id: 999, stream_id: s.id, realm_id: REALM_ID, color: '#111111' },
    ]);
    t.same((await subscriptionStore.listSubscriberIds(pool, [s.id])).get(s.id), [member.id, 999], 'a user the read model does not know yet still counts');
    await db.deps.directory.store.upsertUsers(pool, [{ ...personRecord(member.id, 'member', member.role), is_active: false }]);
    t.same((await subscriptionStore.listSubscriberIds(pool, [s.id])).get(s.id), [999]);
    t.notOk((await db.deps.directory.store.activePeers(pool, REALM_ID)).some((u) => u.id === member.id));
  });

  t.test('user topics match case-insensitively', async (t) => {
    const s = await streamStore.insert(pool, stream('Topics'));
    const now = new Date();
    await userTopicStore.upsert(pool, { user_id: other.id, stream_id: s.id, realm_id: REALM_ID, topic_name: 'Ophelia', visibility_policy: 1, last_updated: now });
    await userTopicStore.upsert(pool, { user_id: other.id, stream_id: s.id, realm_id: REALM_ID, topic_name: 'OPHELIA', visibility_policy: 3, last_updated: now });
    t.match(await userTopicStore.listForUser(pool, other.id), [{ topic_name: 'Ophelia', visibility_policy: 3, stream_name: 'Topics' }], 'one row per topic');
    t.equal(await userTopicStore.remove(pool, other.id, s.id, 'ophelia'), true);
    t.equal(await userTopicStore.remove(pool, other.id, s.id, 'ophelia'), false);
  });

  t.test('statistics: first message and the 28-day window', async (t) => {
    const s = await streamStore.insert(pool, stream('Busy'));
    await streamStatsStore.recordMessage(pool, REALM_ID, s.id, 50, '2026-06-30');
    await streamStatsStore.recordMessage(pool, REALM_ID, s.id, 40, '2026-06-29');
    await streamStatsStore.recordMessage(pool, REALM_ID, s.id, 45, '2026-06-01');
    await streamStatsStore.recordMessage(pool, REALM_ID, s.id, 10, '2026-05-01');
    const stats = await streamStatsStore.statsFor(pool, [s.id, 424242], '2026-06-30');
    t.same(stats.get(s.id), { first_message_id: 10, recent_messages: 2 }, 'June 1st is outside the 28 days that end June 30th');
    t.same(stats.get(424242), { first_message_id: null, recent_messages: 0 });
    await streamStatsStore.recordMessage(pool, REALM_ID + 1, s.id, 5, '2026-06-30');
    t.same((await streamStatsStore.statsFor(pool, [s.id], '2026-06-30')).get(s.id), { first_message_id: 10, recent_messages: 2 }, "another realm's message is not counted");
    await streamStatsStore.pruneBefore(pool, '2026-06-02');
    t.same((await streamStatsStore.statsFor(pool, [s.id], '2026-06-30')).get(s.id), { first_message_id: 10, recent_messages: 2 });
  });

  t.test('statistics: first_message_id after deletions and moves, each change reported once', async (t) => {
    const from = await streamStore.insert(pool, stream('Moved from'));
    const to = await streamStore.insert(pool, stream('Moved to'));
    const firstOf = async (id: number) => (await streamStatsStore.statsFor(pool, [id], '2026-06-30')).get(id)?.first_message_id;
    for (const id of [100, 101, 102]) await streamStatsStore.recordMessage(pool, REALM_ID, from.id, id, '2026-06-30');
    t.equal(await streamStatsStore.recordDeletion(pool, from.id, [102], 100), false, 'a later message going leaves the first alone');
    t.equal(await streamStatsStore.recordDeletion(pool, from.id, [100], 101), true);
    t.equal(await firstOf(from.id), 101);
    t.equal(await streamStatsStore.recordDeletion(pool, from.id, [100], 101), false, 'a redelivered deletion changes nothing');
    const move = { from_stream_id: from.id, to_stream_id: to.id, moved_first_message_id: 101, from_first_message_id: null };
    t.same(await streamStatsStore.recordMove(pool, REALM_ID, move), [
      { stream_id: to.id, first_message_id: 101 },
      { stream_id: from.id, first_message_id: null },
    ]);
    t.equal(await firstOf(from.id), null, 'an emptied stream has none');
    t.same(await streamStatsStore.recordMove(pool, REALM_ID, move), [], 'a redelivered move changes nothing');
    t.equal(await streamStatsStore.recordDeletion(pool, to.id, [101], null), true);
    t.equal(await firstOf(to.id), null);
  });

  t.test('statistics: a batch of several streams, days and realms is counted in one statement', async (t) => {
    const a = await streamStore.insert(pool, stream('Batch A'));
    const b = await streamStore.insert(pool, stream('Batch B'));
    await streamStatsStore.recordMessages(pool, [
      { realmId: REALM_ID, streamId: a.id, messageId: 70, day: '2026-06-30' },
      { realmId: REALM_ID, streamId: b.id, messageId: 71, day: '2026-06-30' },
      { realmId: REALM_ID, streamId: a.id, messageId: 72, day: '2026-06-30' },
      { realmId: REALM_ID, streamId: a.id, messageId: 60, day: '2026-06-29' },
      { realmId: REALM_ID + 1, streamId: b.id, messageId: 1, day: '2026-06-30' },
      { realmId: REALM_ID, streamId: 424243, messageId: 2, day: '2026-06-30' },
    ]);
    await streamStatsStore.recordMessages(pool, [{ realmId: REALM_ID, streamId: a.id, messageId: 73, day: '2026-06-30' }]);
    await streamStatsStore.recordMessages(pool, []);
    const stats = await streamStatsStore.statsFor(pool, [a.id, b.id, 424243], '2026-06-30');
    t.same(stats.get(a.id), { first_message_id: 60, recent_messages: 4 }, 'two days of one stream, the smallest id first');
    t.same(stats.get(b.id), { first_message_id: 71, recent_messages: 1 }, "another realm's message is not counted");
    t.same(stats.get(424243), { first_message_id: null, recent_messages: 0 }, 'an unknown stream gets nothing');
  });
});

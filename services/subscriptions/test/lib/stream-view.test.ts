import t from 'tap';
import { streamEmailAddress } from '../../src/lib/stream-email.js';
import { toApiStream, toApiSubscription, weeklyTraffic } from '../../src/lib/stream-view.js';
import type { StreamRow } from '../../src/store/stream-store.js';
import type { SubscriptionRow } from '../../src/store/subscription-store.js';

const DAY = 24 * 3600 * 1000;
const now = new Date('2026-06-30T12:00:00Z');
const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);

t.test('weekly traffic is estimated from the last four weeks', async (t) => {
  t.equal(weeklyTraffic(daysAgo(3), 50, now), null, 'younger than a week: no estimate');
  t.equal(weeklyTraffic(daysAgo(14), 20, now), 10, 'scaled by the age in days');
  t.equal(weeklyTraffic(daysAgo(100), 41, now), 10, 'four weeks of traffic divided by four, rounded down');
  t.equal(weeklyTraffic(daysAgo(100), 2, now), 1, 'some traffic is at least one a week');
  t.equal(weeklyTraffic(daysAgo(100), 0, now), 0);
});

t.test('stream email addresses', async (t) => {
  const token = '0123456789abcdef0123456789abcdef';
  t.equal(streamEmailAddress('Verona', token, 'zulip.test'), `verona.${token}@zulip.test`);
  t.equal(streamEmailAddress('Denmark is rotten', token, 'zulip.test'), `denmark-is-rotten.${token}@zulip.test`);
  t.equal(streamEmailAddress('Crème brûlée', token, 'zulip.test'), `creme-brulee.${token}@zulip.test`, 'accents fold to ASCII');
  t.equal(streamEmailAddress('日本語', token, 'zulip.test'), `${token}@zulip.test`, 'a name that cannot be folded is left out');
  t.equal(streamEmailAddress('help!', token, 'zulip.test'), `${token}@zulip.test`, 'a trailing hyphen would be trimmed, so the name is left out');
});

const stream: StreamRow = {
  id: 7,
  realm_id: 1,
  name: 'Verona',
  description: 'Fair',
  rendered_description: '<p>Fair</p>',
  invite_only: false,
  is_web_public: false,
  history_public_to_subscribers: true,
  stream_post_policy: 2,
  message_retention_days: null,
  creator_id: 3,
  can_remove_subscribers_group_id: 13,
  email_token: 'abc',
  is_archived: false,
  date_created: daysAgo(30),
  revision: 0,
};
const sub: SubscriptionRow = {
  user_id: 3,
  stream_id: 7,
  realm_id: 1,
  active: true,
  color: '#76ce90',
  is_muted: true,
  pin_to_top: false,
  desktop_notifications: null,
  email_notifications: true,
  push_notifications: null,
  audible_notifications: null,
  wildcard_mentions_notify: false,
};

t.test('stream and subscription objects carry every field of spec 2.5', async (t) => {
  const s = toApiStream(stream, { first_message_id: 40, recent_messages: 8 }, now);
  t.match(s, {
    stream_id: 7,
    name: 'Verona',
    is_announcement_only: true,
    first_message_id: 40,
    stream_weekly_traffic: 2,
    can_remove_subscribers_group_id: 13,
    date_created: Math.floor(daysAgo(30).getTime() / 1000),
  });
  const withSubscribers = toApiSubscription(stream, sub, { emailHost: 'zulip.test', subscribers: [3, 4], now });
  t.match(withSubscribers, { is_muted: true, in_home_view: false, email_notifications: true, desktop_notifications: null, subscribers: [3, 4], email_address: 'verona.abc@zulip.test' });
  t.notOk('subscribers' in toApiSubscription(stream, sub, { emailHost: 'zulip.test', now }), 'subscribers only when asked for');
});

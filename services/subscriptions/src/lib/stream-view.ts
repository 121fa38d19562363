/**
 * How streams and subscriptions look on the wire: the domain record other services keep,
 * the stream object of GET /streams and `stream` events, and the subscription object of
 * spec 2.5. Pure: callers pass the rows and statistics.
 */
import type { StreamRecord } from '@zc/shared/contracts';
import type { StreamStats } from '../store/stream-stats-store.js';
import type { StreamRow } from '../store/stream-store.js';
import type { SubscriptionRow } from '../store/subscription-store.js';
import { POST_POLICY_ADMINS_ONLY } from './stream-rules.js';
import { streamEmailAddress } from './stream-email.js';

const DAY_MS = 24 * 3600 * 1000;
const NO_STATS: StreamStats = { first_message_id: null, recent_messages: 0 };

export const unixSeconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The UTC calendar day of `d` as YYYY-MM-DD (the key of daily traffic counts). */
export const isoDay = (d = new Date()) => d.toISOString().slice(0, 10);

/**
 * Average messages per week over the last four weeks (Zulip's estimate): a stream younger
 * than a week has no estimate; one younger than four weeks is scaled by its age; any
 * traffic at all counts as at least one message a week.
 */
export function weeklyTraffic(created: Date, recentMessages: number, now = new Date()): number | null {
  const ageDays = Math.floor((now.getTime() - created.getTime()) / DAY_MS);
  let weekly: number;
  if (ageDays >= 28) weekly = Math.floor(recentMessages / 4);
  else if (ageDays >= 7) weekly = Math.floor((recentMessages * 7) / ageDays);
  else return null;
  return weekly === 0 && recentMessages > 0 ? 1 : weekly;
}

export function toStreamRecord(s: StreamRow): StreamRecord {
  return {
    stream_id: s.id,
    realm_id: s.realm_id,
    name: s.name,
    description: s.description,
    rendered_description: s.rendered_description,
    invite_only: s.invite_only,
    is_web_public: s.is_web_public,
    history_public_to_subscribers: s.history_public_to_subscribers,
    stream_post_policy: s.stream_post_policy,
    message_retention_days: s.message_retention_days,
    date_created: unixSeconds(s.date_created),
    creator_id: s.creator_id,
    can_remove_subscribers_group_id: s.can_remove_subscribers_group_id,
    is_archived: s.is_archived,
    revision: s.revision,
  };
}

/** The stream object of GET /streams, `stream` create events and `never_subscribed`. */
export function toApiStream(s: StreamRow, stats: StreamStats = NO_STATS, now = new Date()): Record<string, unknown> {
  return {
    stream_id: s.id,
    name: s.name,
    description: s.description,
    rendered_description: s.rendered_description,
    date_created: unixSeconds(s.date_created),
    creator_id: s.creator_id,
    invite_only: s.invite_only,
    is_web_public: s.is_web_public,
    history_public_to_subscribers: s.history_public_to_subscribers,
    stream_post_policy: s.stream_post_policy,
    is_announcement_only: s.stream_post_policy === POST_POLICY_ADMINS_ONLY,
    message_retention_days: s.message_retention_days,
    first_message_id: stats.first_message_id,
    stream_weekly_traffic: weeklyTraffic(s.date_created, stats.recent_messages, now),
    can_remove_subscribers_group_id: s.can_remove_subscribers_group_id,
    is_archived: s.is_archived,
  };
}

/** The personal part of a subscription (spec 2.5); notification settings stay null to inherit. */
export function personalSettings(sub: SubscriptionRow): Record<string, unknown> {
  return {
    color: sub.color,
    is_muted: sub.is_muted,
    in_home_view: !sub.is_muted,
    pin_to_top: sub.pin_to_top,
    desktop_notifications: sub.desktop_notifications,
    email_notifications: sub.email_notifications,
    push_notifications: sub.push_notifications,
    audible_notifications: sub.audible_notifications,
    wildcard_mentions_notify: sub.wildcard_mentions_notify,
  };
}

export interface SubscriptionViewOptions {
  stats?: StreamStats;
  /** Host of the realm's incoming-email addresses. */
  emailHost: string;
  /** Present only when the caller asked for subscribers. */
  subscribers?: readonly number[];
  now?: Date;
}

/** A subscription object of spec 2.5: the stream, the user's settings, the stream's email address. */
export function toApiSubscription(s: StreamRow, sub: SubscriptionRow, o: SubscriptionViewOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...toApiStream(s, o.stats, o.now),
    ...personalSettings(sub),
    email_address: streamEmailAddress(s.name, s.email_token, o.emailHost),
  };
  if (o.subscribers) out.subscribers = [...o.subscribers];
  return out;
}

/** SQL for `subscriptions.subscription`: who is subscribed, with their personal settings. */
import type { Queryable } from '@zc/shared/db';

export interface SubscriptionRow {
  user_id: number;
  stream_id: number;
  realm_id: number;
  active: boolean;
  color: string;
  is_muted: boolean;
  pin_to_top: boolean;
  desktop_notifications: boolean | null;
  email_notifications: boolean | null;
  push_notifications: boolean | null;
  audible_notifications: boolean | null;
  wildcard_mentions_notify: boolean | null;
}

export interface NewSubscription {
  user_id: number;
  stream_id: number;
  realm_id: number;
  color: string;
}

export interface Pair {
  user_id: number;
  stream_id: number;
}

/** Orders pairs by user, then stream: the one lock order of every write, and a stable event order. */
export const byUserThenStream = (x: Pair, y: Pair) => x.user_id - y.user_id || x.stream_id - y.stream_id;

/** Personal settings a client may change, each with the one statement that changes it. */
const PROPERTY_UPDATES = {
  color: 'UPDATE subscriptions.subscription SET color = $3 WHERE user_id = $1 AND stream_id = $2',
  is_muted: 'UPDATE subscriptions.subscription SET is_muted = $3 WHERE user_id = $1 AND stream_id = $2',
  pin_to_top: 'UPDATE subscriptions.subscription SET pin_to_top = $3 WHERE user_id = $1 AND stream_id = $2',
  desktop_notifications: 'UPDATE subscriptions.subscription SET desktop_notifications = $3 WHERE user_id = $1 AND stream_id = $2',
  email_notifications: 'UPDATE subscriptions.subscription SET email_notifications = $3 WHERE user_id = $1 AND stream_id = $2',
  push_notifications: 'UPDATE subscriptions.subscription SET push_notifications = $3 WHERE user_id = $1 AND stream_id = $2',
  audible_notifications: 'UPDATE subscriptions.subscription SET audible_notifications = $3 WHERE user_id = $1 AND stream_id = $2',
  wildcard_mentions_notify: 'UPDATE subscriptions.subscription SET wildcard_mentions_notify = $3 WHERE user_id = $1 AND stream_id = $2',
} as const;
export type StoredProperty = keyof typeof PROPERTY_UPDATES;

const COLS = `s.user_id, s.stream_id, s.realm_id, s.active, s.color, s.is_muted, s.pin_to_top, s.desktop_notifications,
  s.email_notifications, s.push_notifications, s.audible_notifications, s.wildcard_mentions_notify`;

/** Users the read model knows to be deactivated are not subscribers (Zulip's is_user_active). */
const USER_IS_ACTIVE = `NOT EXISTS (SELECT 1 FROM subscriptions.user_account u WHERE u.id = s.user_id AND NOT u.is_active)`;

export const subscriptionStore = {
  /** Existing rows (active or not) for these users and streams. */
  async listRows(q: Queryable, userIds: readonly number[], streamIds: readonly number[]): Promise<SubscriptionRow[]> {
    const { rows } = await q.query<SubscriptionRow>(
      `SELECT ${COLS} FROM subscriptions.subscription s WHERE s.user_id = ANY($1::bigint[]) AND s.stream_id = ANY($2::bigint[])`,
      [userIds, streamIds],
    );
    return rows;
  },
  /** Colors of every subscription the users ever had, to pick a new one. */
  async listColors(q: Queryable, userIds: readonly number[]): Promise<Array<{ user_id: number; color: string }>> {
    const { rows } = await q.query<{ user_id: number; color: string }>(
      'SELECT user_id, color FROM subscriptions.subscription WHERE user_id = ANY($1::bigint[])',
      [userIds],
    );
    return rows;
  },
  /**
   * Subscribes: inserts missing rows with their color, reactivates inactive ones (keeping
   * their settings). Returns the pairs that changed; a pair already active, here or by a
   * concurrent request, is not returned.
   */
  async activate(q: Queryable, subs: readonly NewSubscription[]): Promise<Pair[]> {
    if (subs.length === 0) return [];
    const { rows } = await q.query<Pair>(
      `INSERT INTO subscriptions.subscription (user_id, stream_id, realm_id, color)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[])
       ON CONFLICT (user_id, stream_id) DO UPDATE SET active = true WHERE NOT subscription.active
       RETURNING user_id, stream_id`,
      [subs.map((s) => s.user_id), subs.map((s) => s.stream_id), subs.map((s) => s.realm_id), subs.map((s) => s.color)],
    );
    return rows;
  },
  /** Unsubscribes; returns the pairs that were active. */
  async deactivate(q: Queryable, pairs: readonly Pair[]): Promise<Pair[]> {
    if (pairs.length === 0) return [];
    const { rows } = await q.query<Pair>(
      `UPDATE subscriptions.subscription s SET active = false
       FROM unnest($1::bigint[], $2::bigint[]) AS p(user_id, stream_id)
       WHERE s.user_id = p.user_id AND s.stream_id = p.stream_id AND s.active
       RETURNING s.user_id, s.stream_id`,
      [pairs.map((p) => p.user_id), pairs.map((p) => p.stream_id)],
    );
    return rows;
  },
  /** Unsubscribes everyone from the stream (it is being archived); returns who was subscribed, by id. */
  async deactivateStream(q: Queryable, streamId: number): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>(
      `UPDATE subscriptions.subscription SET active = false WHERE stream_id = $1 AND active RETURNING user_id`,
      [streamId],
    );
    return rows.map((r) => r.user_id).sort((a, b) => a - b);
  },
  async find(q: Queryable, userId: number, streamId: number): Promise<SubscriptionRow | undefined> {
    const { rows } = await q.query<SubscriptionRow>(
      `SELECT ${COLS} FROM subscriptions.subscription s WHERE s.user_id = $1 AND s.stream_id = $2`,
      [userId, streamId],
    );
    return rows[0];
  },
  /** The user's subscription rows (active, or inactive ones for `unsubscribed`). */
  async listForUser(q: Queryable, userId: number, active: boolean): Promise<SubscriptionRow[]> {
    const { rows } = await q.query<SubscriptionRow>(
      `SELECT ${COLS} FROM subscriptions.subscription s WHERE s.user_id = $1 AND s.active = $2`,
      [userId, active],
    );
    return rows;
  },
  async listSubscribedStreamIds(q: Queryable, userId: number): Promise<number[]> {
    const { rows } = await q.query<{ stream_id: number }>(
      'SELECT stream_id FROM subscriptions.subscription WHERE user_id = $1 AND active',
      [userId],
    );
    return rows.map((r) => r.stream_id);
  },
  /** Users who left the stream (an inactive row: the stream is among their `unsubscribed`), in user id order. */
  async listFormerSubscriberIds(q: Queryable, streamId: number): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>(
      `SELECT s.user_id FROM subscriptions.subscription s WHERE s.stream_id = $1 AND NOT s.active AND ${USER_IS_ACTIVE} ORDER BY s.user_id`,
      [streamId],
    );
    return rows.map((r) => r.user_id);
  },
  /** Active subscribers of each stream, by stream id, in user id order. */
  async listSubscriberIds(q: Queryable, streamIds: readonly number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>(streamIds.map((id) => [id, []]));
    if (streamIds.length === 0) return out;
    const { rows } = await q.query<Pair>(
      `SELECT s.stream_id, s.user_id FROM subscriptions.subscription s
       WHERE s.stream_id = ANY($1::bigint[]) AND s.active AND ${USER_IS_ACTIVE} ORDER BY s.user_id`,
      [streamIds],
    );
    for (const r of rows) out.get(r.stream_id)?.push(r.user_id);
    return out;
  },
  async setProperty(q: Queryable, userId: number, streamId: number, property: StoredProperty, value: boolean | string | null): Promise<void> {
    await q.query(PROPERTY_UPDATES[property], [userId, streamId, value]);
  },
};

/** SQL for `subscriptions.user_topic`: a user's visibility policy for topics (muting). */
import type { Queryable } from '@zc/shared/db';

export interface UserTopicRow {
  user_id: number;
  stream_id: number;
  topic_name: string;
  visibility_policy: number;
  last_updated: Date;
}

export interface UserTopicWithStream extends UserTopicRow {
  stream_name: string;
}

const COLS = 't.user_id, t.stream_id, t.topic_name, t.visibility_policy, t.last_updated';

export const userTopicStore = {
  /** Topics match case-insensitively. */
  async find(q: Queryable, userId: number, streamId: number, topic: string): Promise<UserTopicRow | undefined> {
    const { rows } = await q.query<UserTopicRow>(
      `SELECT ${COLS} FROM subscriptions.user_topic t WHERE t.user_id = $1 AND t.stream_id = $2 AND lower(t.topic_name) = lower($3)`,
      [userId, streamId, topic],
    );
    return rows[0];
  },
  /** Sets the policy; a concurrent writer of the same topic makes this an update, not an error. */
  async upsert(q: Queryable, t: Omit<UserTopicRow, 'last_updated'> & { realm_id: number; last_updated: Date }): Promise<void> {
    await q.query(
      `INSERT INTO subscriptions.user_topic (user_id, stream_id, realm_id, topic_name, visibility_policy, last_updated)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (user_id, stream_id, lower(topic_name))
       DO UPDATE SET visibility_policy = EXCLUDED.visibility_policy, last_updated = EXCLUDED.last_updated`,
      [t.user_id, t.stream_id, t.realm_id, t.topic_name, t.visibility_policy, t.last_updated],
    );
  },
  /** Returns whether a row was removed. */
  async remove(q: Queryable, userId: number, streamId: number, topic: string): Promise<boolean> {
    const { rowCount } = await q.query(
      'DELETE FROM subscriptions.user_topic WHERE user_id = $1 AND stream_id = $2 AND lower(topic_name) = lower($3)',
      [userId, streamId, topic],
    );
    return (rowCount ?? 0) > 0;
  },
  /** The user's topic settings with their stream's name, oldest change first. */
  async listForUser(q: Queryable, userId: number): Promise<UserTopicWithStream[]> {
    const { rows } = await q.query<UserTopicWithStream>(
      `SELECT ${COLS}, s.name AS stream_name FROM subscriptions.user_topic t
       JOIN subscriptions.stream s ON s.id = t.stream_id
       WHERE t.user_id = $1 AND NOT s.is_archived ORDER BY t.last_updated, t.stream_id, t.topic_name`,
      [userId],
    );
    return rows;
  },
};

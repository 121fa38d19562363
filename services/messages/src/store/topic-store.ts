/** A stream's topics (GET /users/me/{stream_id}/topics). */
import type { Queryable } from '@zc/shared/db';

export interface TopicRow {
  name: string;
  max_id: number;
}

export const topicStore = {
  /**
   * Each topic of a stream (topics differing only in case are one) with its newest message id,
   * newest first, named as its newest message spells it. The grouping reads only the
   * (recipient_id, lower(topic), id) index; the names come from one row per topic.
   * With `onlyUserId`, only messages that user received count (protected history).
   */
  async topicsOf(q: Queryable, recipientId: number, onlyUserId?: number): Promise<TopicRow[]> {
    const grouped =
      onlyUserId === undefined
        ? 'SELECT max(id) AS max_id FROM messages.message WHERE recipient_id = $1 GROUP BY lower(topic)'
        : `SELECT max(m.id) AS max_id FROM messages.message m JOIN messages.user_message um ON um.message_id = m.id AND um.user_id = $2
           WHERE m.recipient_id = $1 GROUP BY lower(m.topic)`;
    const { rows } = await q.query<TopicRow>(
      `SELECT m.topic AS name, g.max_id FROM (${grouped}) g JOIN messages.message m ON m.id = g.max_id ORDER BY g.max_id DESC`,
      onlyUserId === undefined ? [recipientId] : [recipientId, onlyUserId],
    );
    return rows;
  },
};

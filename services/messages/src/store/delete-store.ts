/** SQL of message deletion (actions/delete-message.ts). */
import type { Queryable } from '@zc/shared/db';

export interface TopicMessageRow {
  id: number;
  topic: string;
  sender_id: number;
  date_sent: Date;
  has_attachment: boolean;
}

export const deleteStore = {
  /**
   * Locks and returns up to `limit` of a topic's newest messages (case-insensitively, as Zulip
   * matches topics), optionally only those `onlyUserId` has a row for (protected history).
   */
  async lockNewestInTopic(q: Queryable, recipientId: number, topic: string, limit: number, onlyUserId?: number): Promise<TopicMessageRow[]> {
    const cols = 'm.id, m.topic, m.sender_id, m.date_sent, m.has_attachment';
    const { rows } = await q.query<TopicMessageRow>(
      onlyUserId === undefined
        ? `SELECT ${cols} FROM messages.message m WHERE m.recipient_id = $1 AND lower(m.topic) = lower($2) ORDER BY m.id DESC LIMIT $3 FOR UPDATE`
        : `SELECT ${cols} FROM messages.message m JOIN messages.user_message um ON um.message_id = m.id AND um.user_id = $4
           WHERE m.recipient_id = $1 AND lower(m.topic) = lower($2) ORDER BY m.id DESC LIMIT $3 FOR UPDATE OF m`,
      onlyUserId === undefined ? [recipientId, topic, limit] : [recipientId, topic, limit, onlyUserId],
    );
    return rows;
  },

  /**
   * Deletes the messages with their per-user rows, reactions and submessages, in one statement; returns
   * the ids that were still there (a concurrent deletion may have taken some).
   */
  async deleteMessages(q: Queryable, ids: readonly number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const { rows } = await q.query<{ id: number }>(
      `WITH r AS (DELETE FROM messages.reaction WHERE message_id = ANY($1::bigint[])),
       sm AS (DELETE FROM messages.submessage WHERE message_id = ANY($1::bigint[])),
       um AS (DELETE FROM messages.user_message WHERE message_id = ANY($1::bigint[]))
       DELETE FROM messages.message WHERE id = ANY($1::bigint[]) RETURNING id`,
      [ids],
    );
    return rows.map((r) => r.id).sort((a, b) => a - b);
  },
};

/** SQL of message edits and moves (actions/edit-message.ts): row locks, the rewrite, and per-user rows. */
import type { EditHistoryEntry } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';

export interface ContentRewrite {
  content: string;
  rendered_content: string;
  rendered_content_version: number;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
}

export const editStore = {
  /** Locks the messages until commit, in id order so that concurrent edits cannot deadlock. */
  async lockMessages(q: Queryable, ids: readonly number[]): Promise<void> {
    await q.query('SELECT id FROM messages.message WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE', [ids]);
  },

  /**
   * Ids of a topic's messages (case-insensitively, as Zulip matches topics) from `fromId` on,
   * optionally only those `onlyUserId` has a row for (streams with protected history).
   */
  /** The oldest message sent to the recipient (a stream's first_message_id), or null. */
  async firstMessageId(q: Queryable, recipientId: number): Promise<number | null> {
    const { rows } = await q.query<{ id: number }>('SELECT id FROM messages.message WHERE recipient_id = $1 ORDER BY id LIMIT 1', [recipientId]);
    return rows[0]?.id ?? null;
  },
  async topicMessageIds(q: Queryable, recipientId: number, topic: string, fromId: number, onlyUserId?: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      onlyUserId === undefined
        ? 'SELECT id FROM messages.message WHERE recipient_id = $1 AND lower(topic) = lower($2) AND id >= $3 ORDER BY id'
        : `SELECT m.id FROM messages.message m JOIN messages.user_message um ON um.message_id = m.id AND um.user_id = $4
           WHERE m.recipient_id = $1 AND lower(m.topic) = lower($2) AND m.id >= $3 ORDER BY m.id`,
      onlyUserId === undefined ? [recipientId, topic, fromId] : [recipientId, topic, fromId, onlyUserId],
    );
    return rows.map((r) => r.id);
  },

  async rewriteContent(q: Queryable, id: number, c: ContentRewrite, history: EditHistoryEntry[], editedAt: Date): Promise<void> {
    await q.query(
      `UPDATE messages.message SET content = $2, rendered_content = $3, rendered_content_version = $4, is_me_message = $5,
         has_link = $6, has_image = $7, has_attachment = $8, edit_history = $9::jsonb, last_edit_time = $10
       WHERE id = $1`,
      [id, c.content, c.rendered_content, c.rendered_content_version, c.is_me_message, c.has_link, c.has_image, c.has_attachment, JSON.stringify(history), editedAt],
    );
  },

  /** Moves messages to a recipient (stream) and topic, each with its own new history. */
  async move(
    q: Queryable,
    ids: readonly number[],
    /** topic null: each message keeps its own (a stream move without a topic change). */
    to: { recipient_id: number; stream_id: number; topic: string | null },
    histories: readonly EditHistoryEntry[][],
    editedAt: Date,
  ): Promise<void> {
    if (ids.length === 0) return;
    await q.query(
      `UPDATE messages.message m SET recipient_id = $2, stream_id = $3, topic = COALESCE($4::text, m.topic), edit_history = x.h, last_edit_time = $6
       FROM unnest($1::bigint[], $5::jsonb[]) AS x(id, h) WHERE m.id = x.id`,
      [ids, to.recipient_id, to.stream_id, to.topic, histories.map((h) => JSON.stringify(h)), editedAt],
    );
  },

  /** Every user's row of one message. */
  async rowsOf(q: Queryable, messageId: number): Promise<Array<{ user_id: number; flags: number }>> {
    const { rows } = await q.query<{ user_id: number; flags: number }>(
      'SELECT user_id, flags FROM messages.user_message WHERE message_id = $1 ORDER BY user_id',
      [messageId],
    );
    return rows;
  },

  /** Users who have a row for any of the messages. */
  async usersWithRows(q: Queryable, messageIds: readonly number[]): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>(
      'SELECT DISTINCT user_id FROM messages.user_message WHERE message_id = ANY($1::bigint[])',
      [messageIds],
    );
    return rows.map((r) => r.user_id);
  },

  /** Sets each user's flags on one message (one statement). */
  async setFlags(q: Queryable, messageId: number, userIds: readonly number[], flags: readonly number[]): Promise<void> {
    if (userIds.length === 0) return;
    await q.query(
      `UPDATE messages.user_message um SET flags = x.f FROM unnest($2::bigint[], $3::int[]) AS x(u, f)
       WHERE um.message_id = $1 AND um.user_id = x.u`,
      [messageId, userIds, flags],
    );
  },

  async deleteRows(q: Queryable, userIds: readonly number[], messageIds: readonly number[]): Promise<void> {
    if (userIds.length === 0 || messageIds.length === 0) return;
    await q.query('DELETE FROM messages.user_message WHERE user_id = ANY($1::bigint[]) AND message_id = ANY($2::bigint[])', [userIds, messageIds]);
  },
};

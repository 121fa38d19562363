/** Submessages readers added to widget messages (migrations/0006). */
import type { Queryable } from '@zc/shared/db';
import type { Submessage } from '../lib/widget.js';

const COLS = 'id, message_id, sender_id, msg_type, content';

export const submessageStore = {
  /** Stores the submessage and returns it with its id. */
  async insert(q: Queryable, s: Omit<Submessage, 'id'>): Promise<Submessage> {
    const { rows } = await q.query<Submessage>(
      `INSERT INTO messages.submessage (message_id, sender_id, msg_type, content) VALUES ($1, $2, $3, $4) RETURNING ${COLS}`,
      [s.message_id, s.sender_id, s.msg_type, s.content],
    );
    return rows[0] as Submessage;
  },

  /** The stored submessages of these messages, each message's in id order. */
  async ofMessages(q: Queryable, messageIds: readonly number[]): Promise<Submessage[]> {
    if (messageIds.length === 0) return [];
    const { rows } = await q.query<Submessage>(`SELECT ${COLS} FROM messages.submessage WHERE message_id = ANY($1::bigint[]) ORDER BY message_id, id`, [messageIds]);
    return rows;
  },

  /** Whether this user has a stored submessage on the message. */
  async hasFrom(q: Queryable, messageId: number, senderId: number): Promise<boolean> {
    const { rows } = await q.query('SELECT 1 FROM messages.submessage WHERE message_id = $1 AND sender_id = $2 LIMIT 1', [messageId, senderId]);
    return rows.length > 0;
  },
};

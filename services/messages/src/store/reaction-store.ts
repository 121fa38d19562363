/** Emoji reactions (migrations/0004): one row per user, message and emoji. */
import type { Queryable } from '@zc/shared/db';

export interface ReactionRow {
  message_id: number;
  user_id: number;
  reaction_type: string;
  emoji_code: string;
  emoji_name: string;
}

export const reactionStore = {
  /** Adds the reaction; false when the user already has it (same message, type and code). */
  async insert(q: Queryable, r: ReactionRow): Promise<boolean> {
    const { rowCount } = await q.query(
      `INSERT INTO messages.reaction (message_id, user_id, reaction_type, emoji_code, emoji_name) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [r.message_id, r.user_id, r.reaction_type, r.emoji_code, r.emoji_name],
    );
    return (rowCount ?? 0) > 0;
  },

  /** Removes the user's reaction and returns it (with its stored name), or undefined if there was none. */
  async remove(q: Queryable, messageId: number, userId: number, type: string, code: string): Promise<ReactionRow | undefined> {
    const { rows } = await q.query<ReactionRow>(
      `DELETE FROM messages.reaction WHERE message_id = $1 AND user_id = $2 AND reaction_type = $3 AND emoji_code = $4
       RETURNING message_id, user_id, reaction_type, emoji_code, emoji_name`,
      [messageId, userId, type, code],
    );
    return rows[0];
  },

  /**
   * Locks the message (until commit, so reactions to it are decided one at a time) and says
   * whether the user already has this emoji on it and the name of the earliest reaction with
   * it, if any (a new one counts as a vote for that name).
   */
  async lockAndInspect(q: Queryable, messageId: number, userId: number, type: string, code: string): Promise<{ mine: boolean; nameInUse: string | undefined }> {
    const { rows } = await q.query<{ mine: boolean; name_in_use: string | null }>(
      `SELECT EXISTS (SELECT 1 FROM messages.reaction r WHERE r.message_id = m.id AND r.user_id = $2 AND r.reaction_type = $3 AND r.emoji_code = $4) AS mine,
         (SELECT r.emoji_name FROM messages.reaction r WHERE r.message_id = m.id AND r.reaction_type = $3 AND r.emoji_code = $4 ORDER BY r.id LIMIT 1) AS name_in_use
       FROM messages.message m WHERE m.id = $1 FOR UPDATE`,
      [messageId, userId, type, code],
    );
    return { mine: rows[0]?.mine ?? false, nameInUse: rows[0]?.name_in_use ?? undefined };
  },

  /** The reactions on these messages, each message's in the order they were added. */
  async ofMessages(q: Queryable, messageIds: readonly number[]): Promise<ReactionRow[]> {
    if (messageIds.length === 0) return [];
    const { rows } = await q.query<ReactionRow>(
      `SELECT message_id, user_id, reaction_type, emoji_code, emoji_name FROM messages.reaction
       WHERE message_id = ANY($1::bigint[]) ORDER BY message_id, id`,
      [messageIds],
    );
    return rows;
  },

  /** Removes every reaction on these messages (message deletion). */
  async removeAllOf(q: Queryable, messageIds: readonly number[]): Promise<void> {
    if (messageIds.length === 0) return;
    await q.query('DELETE FROM messages.reaction WHERE message_id = ANY($1::bigint[])', [messageIds]);
  },
};

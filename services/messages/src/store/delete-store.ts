/** SQL of message deletion (actions/delete-message.ts). */
import type { Queryable } from '@zc/shared/db';

export const deleteStore = {
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

import type { Queryable } from '@zc/shared/db';

export interface UserStatusRow {
  user_id: number;
  status_text: string;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  /** The user's presence_enabled setting (Zulip's legacy `away` is its negation). */
  presence_enabled: boolean;
}

export type StatusChange = Partial<Pick<UserStatusRow, 'status_text' | 'emoji_name' | 'emoji_code' | 'reaction_type'>>;

export const userStatusStore = {
  /** Statuses of the realm's active users who have set one. */
  async listForRealm(q: Queryable, realmId: number): Promise<UserStatusRow[]> {
    const { rows } = await q.query<UserStatusRow>(
      `SELECT s.user_id, s.status_text, s.emoji_name, s.emoji_code, s.reaction_type,
              coalesce((u.settings->>'presence_enabled')::boolean, true) AS presence_enabled
       FROM users.user_status s JOIN users.user_profile u ON u.id = s.user_id
       WHERE u.realm_id = $1 AND u.is_active ORDER BY s.user_id`,
      [realmId],
    );
    return rows;
  },
  /** Creates the user's status row if needed and sets the given fields. */
  async update(q: Queryable, userId: number, c: StatusChange): Promise<void> {
    await q.query(
      `INSERT INTO users.user_status AS s (user_id, status_text, emoji_name, emoji_code, reaction_type)
       VALUES ($1, coalesce($2, ''), coalesce($3, ''), coalesce($4, ''), coalesce($5, 'unicode_emoji'))
       ON CONFLICT (user_id) DO UPDATE SET
         status_text = coalesce($2, s.status_text), emoji_name = coalesce($3, s.emoji_name),
         emoji_code = coalesce($4, s.emoji_code), reaction_type = coalesce($5, s.reaction_type), updated_at = now()`,
      [userId, c.status_text ?? null, c.emoji_name ?? null, c.emoji_code ?? null, c.reaction_type ?? null],
    );
  },
  /** Sets one key of the user's settings object (presence_enabled, for the legacy `away`). */
  async setSetting(q: Queryable, userId: number, name: string, value: unknown): Promise<void> {
    await q.query(`UPDATE users.user_profile SET settings = settings || jsonb_build_object($2::text, $3::jsonb) WHERE id = $1`, [userId, name, JSON.stringify(value)]);
  },
};

import type { Queryable } from '@zc/shared/db';

export interface MutedUserRow {
  muted_user_id: number;
  date_muted: Date;
}

export const mutedUserStore = {
  async listForUser(q: Queryable, userId: number): Promise<MutedUserRow[]> {
    const { rows } = await q.query<MutedUserRow>(
      'SELECT muted_user_id::int AS muted_user_id, date_muted FROM users.muted_user WHERE user_id = $1 ORDER BY date_muted, muted_user_id',
      [userId],
    );
    return rows;
  },
  /** False when the pair is muted already. */
  async insert(q: Queryable, realmId: number, userId: number, mutedUserId: number, at: Date): Promise<boolean> {
    const r = await q.query(
      'INSERT INTO users.muted_user (user_id, muted_user_id, realm_id, date_muted) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING',
      [userId, mutedUserId, realmId, at],
    );
    return r.rowCount === 1;
  },
  /** False when the pair was not muted. */
  async delete(q: Queryable, userId: number, mutedUserId: number): Promise<boolean> {
    const r = await q.query('DELETE FROM users.muted_user WHERE user_id = $1 AND muted_user_id = $2', [userId, mutedUserId]);
    return r.rowCount === 1;
  },
  async nextRevision(q: Queryable): Promise<number> {
    const { rows } = await q.query<{ r: string }>("SELECT nextval('users.mute_revision') AS r");
    return Number(rows[0]?.r);
  },
};

import type { Queryable } from '@zc/shared/db';

/** A user's /bot_storage entries (table users.bot_storage). Sizes count characters, as Zulip does. */
export const botStorageStore = {
  /** Serialises writers of one user's storage until the transaction ends (the size limit holds). */
  async lockOwner(q: Queryable, userId: number): Promise<void> {
    await q.query('SELECT id FROM users.user_profile WHERE id = $1 FOR UPDATE', [userId]);
  },
  async list(q: Queryable, userId: number, keys: readonly string[] | null): Promise<Array<{ key: string; value: string }>> {
    const { rows } = await q.query<{ key: string; value: string }>(
      'SELECT key, value FROM users.bot_storage WHERE user_id = $1 AND ($2::text[] IS NULL OR key = ANY($2::text[])) ORDER BY key',
      [userId, keys],
    );
    return rows;
  },
  /** Total characters of keys and values, in all or only the given entries. */
  async size(q: Queryable, userId: number, keys: readonly string[] | null): Promise<number> {
    const { rows } = await q.query<{ n: string | null }>(
      'SELECT sum(length(key) + length(value)) AS n FROM users.bot_storage WHERE user_id = $1 AND ($2::text[] IS NULL OR key = ANY($2::text[]))',
      [userId, keys],
    );
    return Number(rows[0]?.n ?? 0);
  },
  async put(q: Queryable, userId: number, entries: ReadonlyArray<[string, string]>): Promise<void> {
    if (entries.length === 0) return;
    await q.query(
      `INSERT INTO users.bot_storage (user_id, key, value)
       SELECT $1, k, v FROM unnest($2::text[], $3::text[]) AS e(k, v)
       ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value`,
      [userId, entries.map((e) => e[0]), entries.map((e) => e[1])],
    );
  },
  /** Deletes the given entries (all when `keys` is null); returns how many went. */
  async delete(q: Queryable, userId: number, keys: readonly string[] | null): Promise<number> {
    const r = await q.query('DELETE FROM users.bot_storage WHERE user_id = $1 AND ($2::text[] IS NULL OR key = ANY($2::text[]))', [userId, keys]);
    return r.rowCount ?? 0;
  },
};

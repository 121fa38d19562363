import type { Queryable } from '@zc/shared/db';

export interface LinkifierRow {
  id: number;
  realm_id: number;
  pattern: string;
  url_template: string;
  order: number;
}

export const linkifierStore = {
  /** The realm's linkifiers in processing order. */
  async listForRealm(q: Queryable, realmId: number): Promise<LinkifierRow[]> {
    const { rows } = await q.query<LinkifierRow>(
      'SELECT id, realm_id, pattern, url_template, "order" FROM users.linkifier WHERE realm_id = $1 ORDER BY "order", id',
      [realmId],
    );
    return rows;
  },
  async insert(q: Queryable, realmId: number, pattern: string, urlTemplate: string): Promise<LinkifierRow> {
    const { rows } = await q.query<LinkifierRow>(
      `INSERT INTO users.linkifier (realm_id, pattern, url_template, "order")
       VALUES ($1, $2, $3, COALESCE((SELECT max("order") + 1 FROM users.linkifier WHERE realm_id = $1), 0))
       RETURNING id, realm_id, pattern, url_template, "order"`,
      [realmId, pattern, urlTemplate],
    );
    return rows[0] as LinkifierRow;
  },
  async update(q: Queryable, realmId: number, id: number, pattern: string, urlTemplate: string): Promise<boolean> {
    const r = await q.query('UPDATE users.linkifier SET pattern = $3, url_template = $4 WHERE realm_id = $1 AND id = $2', [realmId, id, pattern, urlTemplate]);
    return r.rowCount === 1;
  },
  async delete(q: Queryable, realmId: number, id: number): Promise<boolean> {
    const r = await q.query('DELETE FROM users.linkifier WHERE realm_id = $1 AND id = $2', [realmId, id]);
    return r.rowCount === 1;
  },
  async setOrder(q: Queryable, realmId: number, orderedIds: readonly number[]): Promise<void> {
    await q.query(
      `UPDATE users.linkifier l SET "order" = o.pos FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, pos)
       WHERE l.realm_id = $1 AND l.id = o.id`,
      [realmId, orderedIds],
    );
  },
};

export const alertWordStore = {
  /** Serializes changes of one user's alert words until the transaction ends. */
  async lockUser(q: Queryable, userId: number): Promise<void> {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('users.alert_word'), $1::int)", [userId]);
  },
  async listForUser(q: Queryable, userId: number): Promise<string[]> {
    const { rows } = await q.query<{ word: string }>('SELECT word FROM users.alert_word WHERE user_id = $1 ORDER BY word', [userId]);
    return rows.map((r) => r.word);
  },
  async add(q: Queryable, realmId: number, userId: number, words: readonly string[]): Promise<void> {
    await q.query(
      `INSERT INTO users.alert_word (user_id, realm_id, word) SELECT $1, $2, w FROM unnest($3::text[]) AS w ON CONFLICT DO NOTHING`,
      [userId, realmId, words],
    );
  },
  async remove(q: Queryable, userId: number, words: readonly string[]): Promise<void> {
    await q.query('DELETE FROM users.alert_word WHERE user_id = $1 AND lower(word) = ANY($2::text[])', [userId, words.map((w) => w.toLowerCase())]);
  },
};

import type { Queryable } from '@zc/shared/db';

export interface PlaygroundRow {
  id: number;
  name: string;
  pygments_language: string;
  url_prefix: string;
}

export const playgroundStore = {
  async listForRealm(q: Queryable, realmId: number): Promise<PlaygroundRow[]> {
    const { rows } = await q.query<PlaygroundRow>(
      'SELECT id::int AS id, name, pygments_language, url_prefix FROM users.realm_playground WHERE realm_id = $1 ORDER BY id',
      [realmId],
    );
    return rows;
  },
  async insert(q: Queryable, realmId: number, p: Omit<PlaygroundRow, 'id'>): Promise<number> {
    const { rows } = await q.query<{ id: number }>(
      'INSERT INTO users.realm_playground (realm_id, name, pygments_language, url_prefix) VALUES ($1, $2, $3, $4) RETURNING id::int AS id',
      [realmId, p.name, p.pygments_language, p.url_prefix],
    );
    return (rows[0] as { id: number }).id;
  },
  async delete(q: Queryable, realmId: number, id: number): Promise<boolean> {
    const r = await q.query('DELETE FROM users.realm_playground WHERE realm_id = $1 AND id = $2', [realmId, id]);
    return r.rowCount === 1;
  },
};

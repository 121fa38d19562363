/** What presence needs to know of users from PostgreSQL (the presence itself is in Redis: presence-store.ts). */
import type { Queryable } from '@zc/shared/db';

export interface PresencePerson {
  id: number;
  delivery_email: string;
  is_active: boolean;
  is_bot: boolean;
}

export const presencePeopleStore = {
  /** Users of the realm who hide their presence (the `presence_enabled` setting off). */
  async listHiddenIds(q: Queryable, realmId: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      `SELECT id::int AS id FROM users.user_profile WHERE realm_id = $1 AND (settings->>'presence_enabled') = 'false'`,
      [realmId],
    );
    return rows.map((r) => r.id);
  },
  /** Active users of the realm (bots included, system bots not), at most `limit`. */
  async listActiveIds(q: Queryable, realmId: number, limit: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      'SELECT id::int AS id FROM users.user_profile WHERE realm_id = $1 AND is_active AND NOT is_system_bot ORDER BY id LIMIT $2',
      [realmId, limit],
    );
    return rows.map((r) => r.id);
  },
  async listByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<PresencePerson[]> {
    const { rows } = await q.query<PresencePerson>(
      'SELECT id::int AS id, delivery_email, is_active, is_bot FROM users.user_profile WHERE realm_id = $1 AND id = ANY($2::bigint[])',
      [realmId, ids],
    );
    return rows;
  },
};

/**
 * SQL for the read model of the users service's realms and users (`subscriptions.realm`,
 * `subscriptions.user_account`), fed by usersEvents and by users.realm_snapshot.
 */
import type { RealmRecord, UserRecord } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';

export interface RealmEntry {
  id: number;
  url: string;
  settings: Record<string, unknown>;
  deactivated: boolean;
}

export interface UserEntry {
  id: number;
  realm_id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  bot_owner_id: number | null;
  date_joined: Date;
}

const USER_COLS = 'id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, bot_owner_id, date_joined';

export const directoryStore = {
  async findRealm(q: Queryable, realmId: number): Promise<RealmEntry | undefined> {
    const { rows } = await q.query<RealmEntry>('SELECT id, url, settings, deactivated FROM subscriptions.realm WHERE id = $1', [realmId]);
    return rows[0];
  },
  async upsertRealm(q: Queryable, r: RealmRecord): Promise<void> {
    await q.query(
      `INSERT INTO subscriptions.realm (id, url, settings, deactivated) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, settings = EXCLUDED.settings, deactivated = EXCLUDED.deactivated`,
      [r.realm_id, r.url, JSON.stringify(r.settings), r.deactivated],
    );
  },
  /** Updates a realm the model already holds; returns false when it holds none. */
  async updateRealm(q: Queryable, r: RealmRecord): Promise<boolean> {
    const { rowCount } = await q.query('UPDATE subscriptions.realm SET url = $2, settings = $3, deactivated = $4 WHERE id = $1', [
      r.realm_id,
      r.url,
      JSON.stringify(r.settings),
      r.deactivated,
    ]);
    return (rowCount ?? 0) > 0;
  },
  async upsertUsers(q: Queryable, users: readonly UserRecord[]): Promise<void> {
    if (users.length === 0) return;
    await q.query(
      `INSERT INTO subscriptions.user_account (${USER_COLS})
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bool[], $8::bool[], $9::bigint[], $10::timestamptz[])
       ON CONFLICT (id) DO UPDATE SET realm_id = EXCLUDED.realm_id, email = EXCLUDED.email, delivery_email = EXCLUDED.delivery_email,
         full_name = EXCLUDED.full_name, role = EXCLUDED.role, is_active = EXCLUDED.is_active, is_bot = EXCLUDED.is_bot,
         bot_owner_id = EXCLUDED.bot_owner_id, date_joined = EXCLUDED.date_joined`,
      [
        users.map((u) => u.user_id),
        users.map((u) => u.realm_id),
        users.map((u) => u.email),
        users.map((u) => u.delivery_email),
        users.map((u) => u.full_name),
        users.map((u) => u.role),
        users.map((u) => u.is_active),
        users.map((u) => u.is_bot),
        users.map((u) => u.bot_owner_id),
        users.map((u) => u.date_joined),
      ],
    );
  },
  async listUsersByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<UserEntry[]> {
    const { rows } = await q.query<UserEntry>(`SELECT ${USER_COLS} FROM subscriptions.user_account WHERE realm_id = $1 AND id = ANY($2::bigint[])`, [
      realmId,
      ids,
    ]);
    return rows;
  },
  /** By display email, case-insensitively (API parameters name display emails, spec §5.6). */
  async listUsersByEmails(q: Queryable, realmId: number, emails: readonly string[]): Promise<UserEntry[]> {
    const { rows } = await q.query<UserEntry>(
      `SELECT ${USER_COLS} FROM subscriptions.user_account WHERE realm_id = $1 AND lower(email) = ANY($2::text[])`,
      [realmId, emails.map((e) => e.toLowerCase())],
    );
    return rows;
  },
  /** Active users of the realm with their roles, by id. */
  async listActiveRoles(q: Queryable, realmId: number): Promise<Array<{ id: number; role: number }>> {
    const { rows } = await q.query<{ id: number; role: number }>(
      'SELECT id, role FROM subscriptions.user_account WHERE realm_id = $1 AND is_active ORDER BY id',
      [realmId],
    );
    return rows;
  },
};

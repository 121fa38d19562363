import type { Queryable } from '@zc/shared/db';

/**
 * A user as the realm's listings need them (realm_users, user groups, event audiences): no
 * credentials and no personal settings, which are the bulk of a row and of its parsing.
 */
export type PersonRow = Omit<UserRow, 'password_hash' | 'api_key_enc' | 'settings' | 'drafts_cleared_at'>;

export interface UserRow {
  id: number;
  realm_id: number;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  timezone: string;
  avatar_source: string;
  avatar_version: number;
  date_joined: Date;
  password_hash: string | null;
  api_key_enc: Buffer;
  can_create_users: boolean;
  is_system_bot: boolean;
  settings: Record<string, unknown>;
  /** PostgreSQL text of the timestamptz (microseconds kept: the drafts service compares with its own). */
  drafts_cleared_at: string | null;
}

export interface NewUser {
  realm_id: number;
  delivery_email: string;
  full_name: string;
  role: number;
  is_bot: boolean;
  bot_type: number | null;
  bot_owner_id: number | null;
  password_hash: string | null;
  api_key_hash: Buffer;
  api_key_enc: Buffer;
  can_create_users: boolean;
  is_system_bot?: boolean;
  timezone?: string;
}

export interface ProfileValueRow {
  user_id: number;
  field_id: number;
  value: string;
  rendered_value: string | null;
}

/** Custom profile field values by user id. */
export type ProfileValues = ReadonlyMap<number, readonly ProfileValueRow[]>;

function byUser(rows: readonly ProfileValueRow[]): ProfileValues {
  const out = new Map<number, ProfileValueRow[]>();
  for (const r of rows) {
    const id = Number(r.user_id);
    const list = out.get(id);
    if (list) list.push(r);
    else out.set(id, [r]);
  }
  return out;
}

const COLS = `id, realm_id, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id, timezone,
  avatar_source, avatar_version, date_joined, password_hash, api_key_enc, can_create_users, is_system_bot, settings,
  drafts_cleared_at::text AS drafts_cleared_at`;

const PERSON_COLS = `id, realm_id, delivery_email, full_name, role, is_active, is_bot, bot_type, bot_owner_id, timezone,
  avatar_source, avatar_version, date_joined, can_create_users, is_system_bot`;

export const userStore = {
  async insert(q: Queryable, u: NewUser): Promise<UserRow> {
    const { rows } = await q.query<UserRow>(
      `INSERT INTO users.user_profile (realm_id, delivery_email, full_name, role, is_bot, bot_type, bot_owner_id,
         password_hash, api_key_hash, api_key_enc, can_create_users, timezone, is_system_bot, settings)
       -- A new user starts with the realm's defaults for new users (Zulip's copy_default_settings).
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,
         COALESCE((SELECT user_settings_defaults FROM users.realm WHERE id = $1), '{}'::jsonb)) RETURNING ${COLS}`,
      [u.realm_id, u.delivery_email, u.full_name, u.role, u.is_bot, u.bot_type, u.bot_owner_id, u.password_hash, u.api_key_hash, u.api_key_enc, u.can_create_users, u.timezone ?? '', u.is_system_bot ?? false],
    );
    return rows[0] as UserRow;
  },
  async findById(q: Queryable, realmId: number, userId: number): Promise<UserRow | undefined> {
    const { rows } = await q.query<UserRow>(`SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND id = $2`, [realmId, userId]);
    return rows[0];
  },
  async findByDeliveryEmail(q: Queryable, realmId: number, email: string): Promise<UserRow | undefined> {
    const { rows } = await q.query<UserRow>(
      `SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND lower(delivery_email) = lower($2)`,
      [realmId, email],
    );
    return rows[0];
  },
  async findByApiKeyHash(q: Queryable, hash: Buffer): Promise<UserRow | undefined> {
    const { rows } = await q.query<UserRow>(`SELECT ${COLS} FROM users.user_profile WHERE api_key_hash = $1`, [hash]);
    return rows[0];
  },
  /** The realm's members, without system bots. */
  async listByRealm(q: Queryable, realmId: number): Promise<PersonRow[]> {
    const { rows } = await q.query<PersonRow>(`SELECT ${PERSON_COLS} FROM users.user_profile WHERE realm_id = $1 AND NOT is_system_bot ORDER BY id`, [realmId]);
    return rows;
  },
  async listSystemBots(q: Queryable, realmId: number): Promise<UserRow[]> {
    const { rows } = await q.query<UserRow>(`SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND is_system_bot ORDER BY id`, [realmId]);
    return rows;
  },
  async listByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<UserRow[]> {
    const { rows } = await q.query<UserRow>(`SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND id = ANY($2::bigint[])`, [realmId, ids]);
    return rows;
  },
  async listByDeliveryEmails(q: Queryable, realmId: number, emails: readonly string[]): Promise<UserRow[]> {
    const { rows } = await q.query<UserRow>(
      `SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND lower(delivery_email) = ANY($2::text[])`,
      [realmId, emails.map((e) => e.toLowerCase())],
    );
    return rows;
  },
  async setCanCreateUsers(q: Queryable, userId: number, value: boolean): Promise<void> {
    await q.query('UPDATE users.user_profile SET can_create_users = $2 WHERE id = $1', [userId, value]);
  },
  async setApiKey(q: Queryable, userId: number, hash: Buffer, enc: Buffer): Promise<void> {
    await q.query('UPDATE users.user_profile SET api_key_hash = $2, api_key_enc = $3 WHERE id = $1', [userId, hash, enc]);
  },
  /** Merges `patch` into the user's stored settings. */
  async mergeSettings(q: Queryable, userId: number, patch: Record<string, unknown>): Promise<void> {
    await q.query('UPDATE users.user_profile SET settings = settings || $2::jsonb WHERE id = $1', [userId, JSON.stringify(patch)]);
  },
  /** Records that the user's drafts are cleared as of this transaction's start; returns that instant. */
  async markDraftsCleared(q: Queryable, userId: number): Promise<string> {
    const { rows } = await q.query<{ at: string }>('UPDATE users.user_profile SET drafts_cleared_at = now() WHERE id = $1 RETURNING drafts_cleared_at::text AS at', [userId]);
    return (rows[0] as { at: string }).at;
  },
  async setTimezone(q: Queryable, userId: number, timezone: string): Promise<void> {
    await q.query('UPDATE users.user_profile SET timezone = $2 WHERE id = $1', [userId, timezone]);
  },
  async setPasswordHash(q: Queryable, userId: number, hash: string): Promise<void> {
    await q.query('UPDATE users.user_profile SET password_hash = $2 WHERE id = $1', [userId, hash]);
  },
  /** Locks the user's row for the rest of the transaction (concurrent setting changes apply one after the other). */
  async findByIdForUpdate(q: Queryable, realmId: number, userId: number): Promise<UserRow | undefined> {
    const { rows } = await q.query<UserRow>(`SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND id = $2 FOR UPDATE`, [realmId, userId]);
    return rows[0];
  },
  async setActive(q: Queryable, userId: number, active: boolean): Promise<void> {
    await q.query('UPDATE users.user_profile SET is_active = $2 WHERE id = $1', [userId, active]);
  },
  async setFullName(q: Queryable, userId: number, fullName: string): Promise<void> {
    await q.query('UPDATE users.user_profile SET full_name = $2 WHERE id = $1', [userId, fullName]);
  },
  async setRole(q: Queryable, userId: number, role: number): Promise<void> {
    await q.query('UPDATE users.user_profile SET role = $2 WHERE id = $1', [userId, role]);
  },
  async setBotOwner(q: Queryable, userId: number, ownerId: number): Promise<void> {
    await q.query('UPDATE users.user_profile SET bot_owner_id = $2 WHERE id = $1', [userId, ownerId]);
  },
  /** Ids of the realm's active members (system bots excluded): the audience of realm-wide events. */
  async listActiveIds(q: Queryable, realmId: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      'SELECT id FROM users.user_profile WHERE realm_id = $1 AND is_active AND NOT is_system_bot ORDER BY id',
      [realmId],
    );
    return rows.map((r) => r.id);
  },
  /** The realm's bots (active or not, system bots excluded), or only those `ownerId` owns. */
  async listBots(q: Queryable, realmId: number, ownerId: number | null): Promise<UserRow[]> {
    const { rows } = await q.query<UserRow>(
      `SELECT ${COLS} FROM users.user_profile WHERE realm_id = $1 AND is_bot AND NOT is_system_bot AND ($2::bigint IS NULL OR bot_owner_id = $2) ORDER BY id`,
      [realmId, ownerId],
    );
    return rows;
  },
  /** Ids of the realm's active owners, locked until the transaction ends (the last-owner rule). */
  async lockActiveOwners(q: Queryable, realmId: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      'SELECT id FROM users.user_profile WHERE realm_id = $1 AND role = 100 AND is_active ORDER BY id FOR UPDATE',
      [realmId],
    );
    return rows.map((r) => r.id);
  },
  /** The custom profile field values of these users, by user. */
  async profileValues(q: Queryable, userIds: readonly number[]): Promise<ProfileValues> {
    const { rows } = await q.query<ProfileValueRow>(
      'SELECT user_id, field_id, value, rendered_value FROM users.custom_profile_field_value WHERE user_id = ANY($1::bigint[])',
      [userIds],
    );
    return byUser(rows);
  },
  /** Every custom profile field value of the realm, by user (one index scan per field, not an id list). */
  async realmProfileValues(q: Queryable, realmId: number): Promise<ProfileValues> {
    const { rows } = await q.query<ProfileValueRow>(
      `SELECT v.user_id, v.field_id, v.value, v.rendered_value
         FROM users.custom_profile_field f JOIN users.custom_profile_field_value v ON v.field_id = f.id
        WHERE f.realm_id = $1`,
      [realmId],
    );
    return byUser(rows);
  },
};

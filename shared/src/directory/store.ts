/**
 * SQL of the directory tables (migrations.ts) in one service's schema. The schema name is
 * fixed when the store is made (a service's own constant, checked to be a plain
 * identifier), never taken from input.
 */
import type { UserGroupRecord } from '../contracts/user-groups.js';
import type { RealmRecord, UserRecord } from '../contracts/users.js';
import type { Queryable } from '../db/index.js';

export interface DirectoryRealm {
  id: number;
  subdomain: string;
  url: string;
  /** As published: `realm_` names stripped; read them through policy/realmSettings. */
  settings: Record<string, unknown>;
  deactivated: boolean;
  /** The users service's change counter of the realm when this copy was written. */
  revision: number;
}

export interface DirectoryUser {
  id: number;
  realm_id: number;
  /** Display email (what other users see); `delivery_email` is the real address. */
  email: string;
  delivery_email: string;
  full_name: string;
  role: number;
  is_active: boolean;
  is_bot: boolean;
  is_system_bot: boolean;
  bot_owner_id: number | null;
  avatar_source: string;
  avatar_version: number;
  date_joined: Date;
}

/** Column lists, for a service's own queries that join the directory tables (e.g. messages' send context). */
export const DIRECTORY_REALM_COLUMNS = 'id, subdomain, url, settings, deactivated, revision';
export const DIRECTORY_USER_COLUMNS =
  'id, realm_id, email, delivery_email, full_name, role, is_active, is_bot, is_system_bot, bot_owner_id, avatar_source, avatar_version, date_joined';

export interface DirectoryStore {
  findRealm(q: Queryable, realmId: number): Promise<DirectoryRealm | undefined>;
  upsertRealm(q: Queryable, r: RealmRecord): Promise<void>;
  /** Updates a realm the directory already holds, unless its copy is newer; returns false when it holds none. */
  updateRealm(q: Queryable, r: RealmRecord): Promise<boolean>;
  upsertUsers(q: Queryable, users: readonly UserRecord[]): Promise<void>;
  usersByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<DirectoryUser[]>;
  /** By display email, or also by real address, case-insensitively. */
  usersByEmails(q: Queryable, realmId: number, emails: readonly string[], opts?: { deliveryEmails?: boolean }): Promise<DirectoryUser[]>;
  usersByFullNames(q: Queryable, realmId: number, names: readonly string[]): Promise<DirectoryUser[]>;
  /** Active users of the realm who are somebody's peers (no system bots), by id. */
  activePeers(q: Queryable, realmId: number): Promise<Array<{ id: number; role: number; date_joined: Date }>>;
  /** Stores a group as published (replacing its members and subgroups), or drops a deleted one. */
  putGroups(q: Queryable, groups: readonly UserGroupRecord[]): Promise<void>;
  realmGroups(q: Queryable, realmId: number): Promise<DirectoryGroup[]>;
}

export interface DirectoryGroup {
  id: number;
  name: string;
  is_system_group: boolean;
  members: number[];
  direct_subgroup_ids: number[];
}

export function directoryStore(schema: string): DirectoryStore {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const realm = `${schema}.realm`;
  const user = `${schema}.user_account`;
  const selectUsers = `SELECT ${DIRECTORY_USER_COLUMNS} FROM ${user} WHERE realm_id = $1`;
  return {
    async findRealm(q, realmId) {
      const { rows } = await q.query<DirectoryRealm>(`SELECT ${DIRECTORY_REALM_COLUMNS} FROM ${realm} WHERE id = $1`, [realmId]);
      return rows[0];
    },
    // A record is never written over a newer one (an event redelivered, or overtaken by a
    // fetch made for a request); records published before revisions existed always apply.
    async upsertRealm(q, r) {
      await q.query(
        `INSERT INTO ${realm} (${DIRECTORY_REALM_COLUMNS}) VALUES ($1, $2, $3, $4, $5, COALESCE($6::integer, 0))
         ON CONFLICT (id) DO UPDATE SET subdomain = EXCLUDED.subdomain, url = EXCLUDED.url, settings = EXCLUDED.settings, deactivated = EXCLUDED.deactivated,
           revision = EXCLUDED.revision
         WHERE $6::integer IS NULL OR ${realm}.revision <= $6::integer`,
        [r.realm_id, r.subdomain, r.url, JSON.stringify(r.settings), r.deactivated, r.revision ?? null],
      );
    },
    async updateRealm(q, r) {
      const { rowCount } = await q.query(
        `UPDATE ${realm} SET subdomain = $2, url = $3, settings = $4, deactivated = $5, revision = COALESCE($6::integer, revision)
         WHERE id = $1 AND ($6::integer IS NULL OR revision <= $6::integer)`,
        [r.realm_id, r.subdomain, r.url, JSON.stringify(r.settings), r.deactivated, r.revision ?? null],
      );
      return (rowCount ?? 0) > 0;
    },
    async upsertUsers(q, users) {
      if (users.length === 0) return;
      await q.query(
        `INSERT INTO ${user} (${DIRECTORY_USER_COLUMNS})
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(id bigint, realm_id bigint, email text, delivery_email text, full_name text,
           role integer, is_active boolean, is_bot boolean, is_system_bot boolean, bot_owner_id bigint, avatar_source text,
           avatar_version integer, date_joined timestamptz)
         ON CONFLICT (id) DO UPDATE SET realm_id = EXCLUDED.realm_id, email = EXCLUDED.email, delivery_email = EXCLUDED.delivery_email,
           full_name = EXCLUDED.full_name, role = EXCLUDED.role, is_active = EXCLUDED.is_active, is_bot = EXCLUDED.is_bot,
           is_system_bot = EXCLUDED.is_system_bot, bot_owner_id = EXCLUDED.bot_owner_id, avatar_source = EXCLUDED.avatar_source,
           avatar_version = EXCLUDED.avatar_version, date_joined = EXCLUDED.date_joined`,
        [JSON.stringify(users.map((u) => ({ ...u, id: u.user_id, is_system_bot: u.is_system_bot === true })))],
      );
    },
    async usersByIds(q, realmId, ids) {
      if (ids.length === 0) return [];
      const { rows } = await q.query<DirectoryUser>(`${selectUsers} AND id = ANY($2::bigint[])`, [realmId, ids]);
      return rows;
    },
    async usersByEmails(q, realmId, emails, opts = {}) {
      if (emails.length === 0) return [];
      const lower = emails.map((e) => e.toLowerCase());
      const sql = opts.deliveryEmails
        ? `${selectUsers} AND (lower(email) = ANY($2::text[]) OR lower(delivery_email) = ANY($2::text[]))`
        : `${selectUsers} AND lower(email) = ANY($2::text[])`;
      const { rows } = await q.query<DirectoryUser>(sql, [realmId, lower]);
      return rows;
    },
    async usersByFullNames(q, realmId, names) {
      if (names.length === 0) return [];
      const { rows } = await q.query<DirectoryUser>(`${selectUsers} AND lower(full_name) = ANY($2::text[])`, [realmId, names.map((n) => n.toLowerCase())]);
      return rows;
    },
    async activePeers(q, realmId) {
      const { rows } = await q.query<{ id: number; role: number; date_joined: Date }>(
        `SELECT id, role, date_joined FROM ${user} WHERE realm_id = $1 AND is_active AND NOT is_system_bot ORDER BY id`,
        [realmId],
      );
      return rows;
    },
    async putGroups(q, groups) {
      for (const g of groups) {
        await q.query(`DELETE FROM ${schema}.user_group WHERE id = $1`, [g.group_id]);
        if (g.deleted) continue;
        await q.query(`INSERT INTO ${schema}.user_group (id, realm_id, name, is_system_group) VALUES ($1, $2, $3, $4)`, [
          g.group_id,
          g.realm_id,
          g.name,
          g.is_system_group,
        ]);
        await q.query(`INSERT INTO ${schema}.user_group_member (group_id, user_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`, [g.group_id, g.members]);
        await q.query(`INSERT INTO ${schema}.user_group_subgroup (group_id, subgroup_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING`, [
          g.group_id,
          g.direct_subgroup_ids,
        ]);
      }
    },
    async realmGroups(q, realmId) {
      const { rows } = await q.query<DirectoryGroup>(
        `SELECT g.id, g.name, g.is_system_group,
           ARRAY(SELECT m.user_id FROM ${schema}.user_group_member m WHERE m.group_id = g.id ORDER BY m.user_id)::int[] AS members,
           ARRAY(SELECT s.subgroup_id FROM ${schema}.user_group_subgroup s WHERE s.group_id = g.id ORDER BY s.subgroup_id)::bigint[] AS direct_subgroup_ids
         FROM ${schema}.user_group g WHERE g.realm_id = $1 ORDER BY g.id`,
        [realmId],
      );
      return rows.map((r) => ({ ...r, direct_subgroup_ids: r.direct_subgroup_ids.map(Number) }));
    },
  };
}

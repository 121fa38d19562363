/** SQL of user groups (users.user_group, its direct members and direct subgroups). */
import type { Queryable } from '@zc/shared/db';
import { SYSTEM_GROUPS, systemGroupId, systemSubgroupOf } from '@zc/shared/policy';

export interface UserGroupRow {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  is_system_group: boolean;
  /** Stored direct members (none for system groups: roles give theirs). */
  members: number[];
  direct_subgroup_ids: number[];
}

const SELECT_GROUPS = `SELECT g.id, g.realm_id, g.name, g.description, g.is_system_group,
    ARRAY(SELECT m.user_id FROM users.user_group_member m WHERE m.group_id = g.id ORDER BY m.user_id)::int[] AS members,
    ARRAY(SELECT s.subgroup_id FROM users.user_group_subgroup s WHERE s.group_id = g.id ORDER BY s.subgroup_id)::bigint[] AS direct_subgroup_ids
  FROM users.user_group g`;

const fixIds = (r: UserGroupRow): UserGroupRow => ({ ...r, direct_subgroup_ids: r.direct_subgroup_ids.map(Number) });

export const userGroupStore = {
  /** Creates the system groups of every realm that lacks them (new realms, and realms older than groups). */
  async ensureSystemGroups(q: Queryable, realmId: number | null): Promise<void> {
    const names = SYSTEM_GROUPS.map((g) => g.name);
    const offsets = SYSTEM_GROUPS.map((_, i) => i);
    const subOffsets = SYSTEM_GROUPS.map((g) => {
      const sub = systemSubgroupOf(g.name);
      return sub ? systemGroupId(0, sub) : null;
    });
    await q.query(
      `WITH realms AS (SELECT id FROM users.realm WHERE $4::bigint IS NULL OR id = $4),
       ins AS (
         INSERT INTO users.user_group (id, realm_id, name, description, is_system_group)
         SELECT r.id * $5 + g.off, r.id, g.name, g.description, true
         FROM realms r CROSS JOIN unnest($1::text[], $2::text[], $3::int[]) AS g(name, description, off)
         ON CONFLICT DO NOTHING RETURNING id, realm_id)
       INSERT INTO users.user_group_subgroup (group_id, subgroup_id)
       SELECT ins.id, ins.realm_id * $5 + s.sub FROM ins JOIN unnest($3::int[], $6::int[]) AS s(off, sub) ON ins.id = ins.realm_id * $5 + s.off
       WHERE s.sub IS NOT NULL`,
      [names, SYSTEM_GROUPS.map((g) => g.description), offsets, realmId, SYSTEM_GROUPS.length, subOffsets],
    );
  },
  async listForRealm(q: Queryable, realmId: number): Promise<UserGroupRow[]> {
    const { rows } = await q.query<UserGroupRow>(`${SELECT_GROUPS} WHERE g.realm_id = $1 ORDER BY g.id`, [realmId]);
    return rows.map(fixIds);
  },
  async find(q: Queryable, realmId: number, groupId: number, opts: { forUpdate?: boolean } = {}): Promise<UserGroupRow | undefined> {
    if (opts.forUpdate) await q.query('SELECT 1 FROM users.user_group WHERE id = $1 AND realm_id = $2 FOR UPDATE', [groupId, realmId]);
    const { rows } = await q.query<UserGroupRow>(`${SELECT_GROUPS} WHERE g.realm_id = $1 AND g.id = $2`, [realmId, groupId]);
    return rows[0] ? fixIds(rows[0]) : undefined;
  },
  async findByName(q: Queryable, realmId: number, name: string): Promise<{ id: number } | undefined> {
    const { rows } = await q.query<{ id: number }>('SELECT id FROM users.user_group WHERE realm_id = $1 AND name = $2', [realmId, name]);
    return rows[0];
  },
  async insert(q: Queryable, g: { realm_id: number; name: string; description: string; creator_id: number }): Promise<number> {
    const { rows } = await q.query<{ id: number }>(
      'INSERT INTO users.user_group (realm_id, name, description, creator_id) VALUES ($1, $2, $3, $4) RETURNING id',
      [g.realm_id, g.name, g.description, g.creator_id],
    );
    return (rows[0] as { id: number }).id;
  },
  async rename(q: Queryable, groupId: number, name: string): Promise<void> {
    await q.query('UPDATE users.user_group SET name = $2 WHERE id = $1', [groupId, name]);
  },
  async setDescription(q: Queryable, groupId: number, description: string): Promise<void> {
    await q.query('UPDATE users.user_group SET description = $2 WHERE id = $1', [groupId, description]);
  },
  async delete(q: Queryable, groupId: number): Promise<void> {
    await q.query('DELETE FROM users.user_group WHERE id = $1', [groupId]);
  },
  async addMembers(q: Queryable, groupId: number, userIds: readonly number[]): Promise<void> {
    await q.query('INSERT INTO users.user_group_member (group_id, user_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [groupId, userIds]);
  },
  async removeMembers(q: Queryable, groupId: number, userIds: readonly number[]): Promise<void> {
    await q.query('DELETE FROM users.user_group_member WHERE group_id = $1 AND user_id = ANY($2::bigint[])', [groupId, userIds]);
  },
  async addSubgroups(q: Queryable, groupId: number, subgroupIds: readonly number[]): Promise<void> {
    await q.query('INSERT INTO users.user_group_subgroup (group_id, subgroup_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [groupId, subgroupIds]);
  },
  async removeSubgroups(q: Queryable, groupId: number, subgroupIds: readonly number[]): Promise<void> {
    await q.query('DELETE FROM users.user_group_subgroup WHERE group_id = $1 AND subgroup_id = ANY($2::bigint[])', [groupId, subgroupIds]);
  },
  /** Groups that have this one as a direct subgroup (they change when it is deleted). */
  async supergroupIds(q: Queryable, groupId: number): Promise<number[]> {
    const { rows } = await q.query<{ group_id: number }>('SELECT group_id FROM users.user_group_subgroup WHERE subgroup_id = $1', [groupId]);
    return rows.map((r) => r.group_id);
  },
};

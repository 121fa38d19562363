/** SQL for `drafts.draft`; every method takes the Queryable so actions own transactions. */
import type { Queryable } from '@zc/shared/db';
import type { NormalisedDraft } from '../lib/draft-rules.js';

export interface DraftRow {
  id: number;
  realm_id: number;
  user_id: number;
  type: string;
  to_ids: number[];
  topic: string;
  content: string;
  last_edit_time: Date;
}

export interface DraftStore {
  insertMany(q: Queryable, owner: DraftOwner, rows: readonly NormalisedDraft[]): Promise<DraftRow[]>;
  findOwned(q: Queryable, userId: number, draftId: number): Promise<DraftRow | undefined>;
  listForUser(q: Queryable, userId: number): Promise<DraftRow[]>;
  replaceOwned(q: Queryable, userId: number, draftId: number, d: NormalisedDraft): Promise<DraftRow | undefined>;
  deleteOwned(q: Queryable, userId: number, draftId: number): Promise<boolean>;
  /** Deletes the user's drafts stored up to `at` (PostgreSQL timestamptz text); returns how many. */
  deleteStoredUpTo(q: Queryable, userId: number, at: string): Promise<number>;
}

export interface DraftOwner {
  realm_id: number;
  user_id: number;
}

const COLUMNS = 'id, realm_id, user_id, type, to_ids, topic, content, last_edit_time';

// node-postgres returns bigint[] as strings; ids are below 2^53.
const toRow = (r: DraftRow & { to_ids: Array<number | string> }): DraftRow => ({ ...r, to_ids: r.to_ids.map(Number) });

export const draftStore: DraftStore = {
  async insertMany(q, owner, rows) {
    if (rows.length === 0) return [];
    // One statement for any number of drafts; WITH ORDINALITY keeps the order given.
    const { rows: out } = await q.query(
      `INSERT INTO drafts.draft (realm_id, user_id, type, to_ids, topic, content, last_edit_time)
       SELECT $1, $2, d.type, d.to_ids::bigint[], d.topic, d.content, d.last_edit_time
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         WITH ORDINALITY AS d(type, to_ids, topic, content, last_edit_time, n)
       ORDER BY d.n
       RETURNING ${COLUMNS}`,
      [
        owner.realm_id,
        owner.user_id,
        rows.map((r) => r.type),
        rows.map((r) => `{${r.to.join(',')}}`),
        rows.map((r) => r.topic),
        rows.map((r) => r.content),
        rows.map((r) => r.lastEditTime),
      ],
    );
    // RETURNING follows insertion order, and identity values grow with it.
    return out.map(toRow).sort((a, b) => a.id - b.id);
  },

  async findOwned(q, userId, draftId) {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM drafts.draft WHERE id = $1 AND user_id = $2`, [draftId, userId]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  async listForUser(q, userId) {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM drafts.draft WHERE user_id = $1 ORDER BY last_edit_time DESC, id DESC`, [userId]);
    return rows.map(toRow);
  },

  async replaceOwned(q, userId, draftId, d) {
    const { rows } = await q.query(
      `UPDATE drafts.draft SET type = $3, to_ids = $4::bigint[], topic = $5, content = $6, last_edit_time = $7
       WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
      [draftId, userId, d.type, d.to, d.topic, d.content, d.lastEditTime],
    );
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  async deleteOwned(q, userId, draftId) {
    const { rowCount } = await q.query('DELETE FROM drafts.draft WHERE id = $1 AND user_id = $2', [draftId, userId]);
    return (rowCount ?? 0) > 0;
  },

  async deleteStoredUpTo(q, userId, at) {
    const { rowCount } = await q.query('DELETE FROM drafts.draft WHERE user_id = $1 AND created_at <= $2::timestamptz', [userId, at]);
    return rowCount ?? 0;
  },
};

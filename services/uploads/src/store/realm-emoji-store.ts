/** SQL for `uploads.realm_emoji`; actions own the transactions. */
import { isUniqueViolation, type Queryable } from '@zc/shared/db';

export interface RealmEmojiRow {
  id: number;
  realm_id: number;
  name: string;
  author_id: number | null;
  file_name: string;
  is_animated: boolean;
  deactivated: boolean;
}

const COLUMNS = 'id, realm_id, name, author_id, file_name, is_animated, deactivated';

const toRow = (r: Record<string, unknown>): RealmEmojiRow => ({
  id: Number(r.id),
  realm_id: Number(r.realm_id),
  name: String(r.name),
  author_id: r.author_id === null ? null : Number(r.author_id),
  file_name: String(r.file_name),
  is_animated: r.is_animated === true,
  deactivated: r.deactivated === true,
});

/** Thrown by `insert` when an active emoji of the realm already has the name. */
export class EmojiNameTaken extends Error {}

export const realmEmojiStore = {
  /** Serialises changes of one realm's emoji, so each event carries the set as it then is. */
  async lockRealm(q: Queryable, realmId: number): Promise<void> {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('uploads.realm_emoji'), $1::int)", [realmId]);
  },

  /** An id for an emoji about to be stored (its files are named after it before the row exists). */
  async reserveId(q: Queryable): Promise<number> {
    const { rows } = await q.query("SELECT nextval(pg_get_serial_sequence('uploads.realm_emoji', 'id')) AS id");
    return Number(rows[0].id);
  },

  async insert(q: Queryable, e: RealmEmojiRow): Promise<RealmEmojiRow> {
    try {
      const { rows } = await q.query(
        `INSERT INTO uploads.realm_emoji (id, realm_id, name, author_id, file_name, is_animated, deactivated)
         VALUES ($1, $2, $3, $4, $5, $6, false) RETURNING ${COLUMNS}`,
        [e.id, e.realm_id, e.name, e.author_id, e.file_name, e.is_animated],
      );
      return toRow(rows[0]);
    } catch (err) {
      if (isUniqueViolation(err)) throw new EmojiNameTaken();
      throw err;
    }
  },

  async findActiveByName(q: Queryable, realmId: number, name: string): Promise<RealmEmojiRow | undefined> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.realm_emoji WHERE realm_id = $1 AND name = $2 AND NOT deactivated`, [realmId, name]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  async findById(q: Queryable, realmId: number, id: number): Promise<RealmEmojiRow | undefined> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.realm_emoji WHERE realm_id = $1 AND id = $2`, [realmId, id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  /** Marks the active emoji of that name deactivated (locking it); undefined when there is none. */
  async deactivate(q: Queryable, realmId: number, id: number): Promise<RealmEmojiRow | undefined> {
    const { rows } = await q.query(
      `UPDATE uploads.realm_emoji SET deactivated = true WHERE realm_id = $1 AND id = $2 AND NOT deactivated RETURNING ${COLUMNS}`,
      [realmId, id],
    );
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  /** Every emoji of the realm, deactivated ones included, by id. */
  async listForRealm(q: Queryable, realmId: number): Promise<RealmEmojiRow[]> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.realm_emoji WHERE realm_id = $1 ORDER BY id`, [realmId]);
    return rows.map(toRow);
  },

  /** Emoji of the realm with one of these names or ids, active or not. */
  async findByNamesOrIds(q: Queryable, realmId: number, names: readonly string[], ids: readonly number[]): Promise<RealmEmojiRow[]> {
    const { rows } = await q.query(
      `SELECT ${COLUMNS} FROM uploads.realm_emoji WHERE realm_id = $1 AND (name = ANY($2::text[]) OR id = ANY($3::bigint[])) ORDER BY id`,
      [realmId, names, ids],
    );
    return rows.map(toRow);
  },
};

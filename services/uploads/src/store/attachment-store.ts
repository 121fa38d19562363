/** SQL for `uploads.attachment` and `uploads.attachment_message`; actions own the transactions. */
import type { Queryable } from '@zc/shared/db';

export interface AttachmentRow {
  id: number;
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string;
  size: number;
  create_time: Date;
}

export interface LinkedMessage {
  attachment_id: number;
  message_id: number;
  date_sent: Date;
}

/** A thumbnailed image (uploads.image_attachment) with its attachment's path id. */
export interface ImageRow {
  attachment_id: number;
  path_id: string;
  original_width: number;
  original_height: number;
  frames: number;
  thumbnail_formats: string[];
}

export interface NewAttachment {
  realm_id: number;
  owner_id: number;
  path_id: string;
  file_name: string;
  content_type: string;
  size: number;
}

const COLUMNS = 'id, realm_id, owner_id, path_id, file_name, content_type, size, create_time';

// node-postgres returns bigint as text; ids and sizes are far below 2^53.
const toRow = (r: Record<string, unknown>): AttachmentRow => ({
  id: Number(r.id),
  realm_id: Number(r.realm_id),
  owner_id: Number(r.owner_id),
  path_id: String(r.path_id),
  file_name: String(r.file_name),
  content_type: String(r.content_type),
  size: Number(r.size),
  create_time: r.create_time as Date,
});

export const attachmentStore = {
  /** Serialises quota checks of one realm until the transaction ends. */
  async lockRealm(q: Queryable, realmId: number): Promise<void> {
    await q.query("SELECT pg_advisory_xact_lock(hashtext('uploads.realm'), $1::int)", [realmId]);
  },

  async insert(q: Queryable, a: NewAttachment): Promise<AttachmentRow> {
    const { rows } = await q.query(
      `INSERT INTO uploads.attachment (realm_id, owner_id, path_id, file_name, content_type, size)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`,
      [a.realm_id, a.owner_id, a.path_id, a.file_name, a.content_type, a.size],
    );
    return toRow(rows[0]);
  },

  async spaceUsed(q: Queryable, realmId: number): Promise<number> {
    const { rows } = await q.query('SELECT coalesce(sum(size), 0) AS used FROM uploads.attachment WHERE realm_id = $1', [realmId]);
    return Number(rows[0].used);
  },

  async findByPathId(q: Queryable, pathId: string): Promise<AttachmentRow | undefined> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.attachment WHERE path_id = $1`, [pathId]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  async findById(q: Queryable, id: number): Promise<AttachmentRow | undefined> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.attachment WHERE id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  async findManyByPathIds(q: Queryable, realmId: number, pathIds: readonly string[]): Promise<AttachmentRow[]> {
    if (pathIds.length === 0) return [];
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.attachment WHERE realm_id = $1 AND path_id = ANY($2::text[])`, [realmId, pathIds]);
    return rows.map(toRow);
  },

  async listOwned(q: Queryable, ownerId: number): Promise<AttachmentRow[]> {
    const { rows } = await q.query(`SELECT ${COLUMNS} FROM uploads.attachment WHERE owner_id = $1 ORDER BY id DESC`, [ownerId]);
    return rows.map(toRow);
  },

  async messagesOf(q: Queryable, attachmentIds: readonly number[]): Promise<LinkedMessage[]> {
    if (attachmentIds.length === 0) return [];
    const { rows } = await q.query(
      'SELECT attachment_id, message_id, date_sent FROM uploads.attachment_message WHERE attachment_id = ANY($1::bigint[]) ORDER BY message_id',
      [attachmentIds],
    );
    return rows.map((r) => ({ attachment_id: Number(r.attachment_id), message_id: Number(r.message_id), date_sent: r.date_sent as Date }));
  },

  /** The attachments a message links now. */
  async attachmentIdsOfMessage(q: Queryable, messageId: number): Promise<number[]> {
    const { rows } = await q.query('SELECT attachment_id FROM uploads.attachment_message WHERE message_id = $1', [messageId]);
    return rows.map((r) => Number(r.attachment_id));
  },

  /**
   * Records `version` as the message's latest link change if it is newer than the one stored;
   * whether it was (the change is then to be applied). Concurrent callers with one version
   * wait for each other, and only the first gets true.
   */
  async advanceLinkVersion(q: Queryable, realmId: number, messageId: number, version: number): Promise<boolean> {
    const { rowCount } = await q.query(
      `INSERT INTO uploads.message_link_version (message_id, realm_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (message_id) DO UPDATE SET version = EXCLUDED.version WHERE message_link_version.version < EXCLUDED.version`,
      [messageId, realmId, version],
    );
    return (rowCount ?? 0) > 0;
  },

  /** Makes the message link exactly `attachmentIds`; returns the attachments whose links changed. */
  async replaceLinksOfMessage(q: Queryable, messageId: number, dateSent: Date, attachmentIds: readonly number[]): Promise<number[]> {
    const { rows: removed } = await q.query(
      'DELETE FROM uploads.attachment_message WHERE message_id = $1 AND NOT (attachment_id = ANY($2::bigint[])) RETURNING attachment_id',
      [messageId, attachmentIds],
    );
    const { rows: added } = await q.query(
      `INSERT INTO uploads.attachment_message (attachment_id, message_id, date_sent)
       SELECT a, $2, $3 FROM unnest($1::bigint[]) AS a ON CONFLICT DO NOTHING RETURNING attachment_id`,
      [attachmentIds, messageId, dateSent],
    );
    return [...new Set([...removed, ...added].map((r) => Number(r.attachment_id)))];
  },

  async insertImage(q: Queryable, i: Omit<ImageRow, 'path_id'>): Promise<void> {
    await q.query(
      `INSERT INTO uploads.image_attachment (attachment_id, original_width, original_height, frames, thumbnail_formats)
       VALUES ($1, $2, $3, $4, $5)`,
      [i.attachment_id, i.original_width, i.original_height, i.frames, i.thumbnail_formats],
    );
  },

  /** The thumbnailed images among a realm's uploads with these path ids. */
  async findImagesByPathIds(q: Queryable, realmId: number, pathIds: readonly string[]): Promise<ImageRow[]> {
    if (pathIds.length === 0) return [];
    const { rows } = await q.query(
      `SELECT i.attachment_id, a.path_id, i.original_width, i.original_height, i.frames, i.thumbnail_formats
       FROM uploads.image_attachment i JOIN uploads.attachment a ON a.id = i.attachment_id
       WHERE a.realm_id = $1 AND a.path_id = ANY($2::text[])`,
      [realmId, pathIds],
    );
    return rows.map((r) => ({
      attachment_id: Number(r.attachment_id),
      path_id: String(r.path_id),
      original_width: Number(r.original_width),
      original_height: Number(r.original_height),
      frames: Number(r.frames),
      thumbnail_formats: r.thumbnail_formats as string[],
    }));
  },

  async deleteOwned(q: Queryable, ownerId: number, id: number): Promise<AttachmentRow | undefined> {
    const { rows } = await q.query(`DELETE FROM uploads.attachment WHERE id = $1 AND owner_id = $2 RETURNING ${COLUMNS}`, [id, ownerId]);
    return rows[0] ? toRow(rows[0]) : undefined;
  },

  /**
   * Deletes up to `limit` uploads no message links that were made before `before`, skipping
   * rows another replica's sweep holds; returns them (their objects are the caller's to remove).
   */
  async deleteUnclaimed(q: Queryable, before: Date, limit: number): Promise<AttachmentRow[]> {
    const { rows } = await q.query(
      `DELETE FROM uploads.attachment WHERE id IN (
         SELECT a.id FROM uploads.attachment a
         WHERE a.create_time < $1 AND NOT EXISTS (SELECT 1 FROM uploads.attachment_message m WHERE m.attachment_id = a.id)
         ORDER BY a.id LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [before, limit],
    );
    return rows.map(toRow);
  },
};

export type AttachmentStore = typeof attachmentStore;

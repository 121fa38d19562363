/**
 * A realm as one JSON document, for backups and moving a realm to another server: every row
 * of every service schema that belongs to the realm (read models included, so the services
 * need no replay after an import), and the bytes of its uploaded files. Rows keep their ids,
 * so an import goes into a database where those ids are free (a new server, or this one after
 * the realm's rows were removed); it refuses otherwise rather than merge. Event queues are
 * not exported: clients re-register, as after any restart that loses Redis.
 *
 * Which rows belong to a realm is read from the catalog (catalog.ts).
 */
import { transaction, type Pool, type Queryable } from '../db/index.js';
import { SCHEMAS, insertOrder, q2, realmFilter, tablesOf, unattributable } from './catalog.js';

export { SCHEMAS } from './catalog.js';
export { deleteRealm, dropRealmRedisState, RealmDeletionError, type RealmDeletion } from './realm-deletion.js';

export const ARCHIVE_FORMAT = 'zc-realm-export';
export const ARCHIVE_VERSION = 1;

export interface RealmArchive {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  exported_at: string;
  realm: { id: number; subdomain: string; name: string };
  /** `schema.table` → rows as PostgreSQL renders them to JSON. */
  tables: Record<string, unknown[]>;
  /** Uploaded files by storage key, base64. */
  files: Record<string, { content_type: string; base64: string }>;
}

export interface ArchiveFiles {
  read(key: string): Promise<Buffer | undefined>;
  write(key: string, body: Buffer, contentType: string): Promise<void>;
}

export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

/** The realm's rows and files. Throws ArchiveError naming tables it cannot attribute to a realm. */
export async function exportRealm(q: Queryable, subdomain: string, files?: ArchiveFiles): Promise<RealmArchive> {
  const { rows: realms } = await q.query<{ id: string; subdomain: string; name: string }>('SELECT id, subdomain, name FROM users.realm WHERE subdomain = $1', [subdomain]);
  const realm = realms[0];
  if (!realm) throw new ArchiveError(`no realm with subdomain '${subdomain}'`);
  const tables = await tablesOf(q);
  const unknown = unattributable(tables);
  if (unknown.length) throw new ArchiveError(`cannot tell which rows of ${unknown.join(', ')} belong to a realm`);
  const out: RealmArchive = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    exported_at: new Date().toISOString(),
    realm: { id: Number(realm.id), subdomain: realm.subdomain, name: realm.name },
    tables: {},
    files: {},
  };
  for (const t of tables) {
    const { rows } = await q.query<{ rows: unknown[] }>(`SELECT coalesce(json_agg(x), '[]'::json) AS rows FROM ${q2(t.schema, t.table)} x WHERE ${realmFilter(t)?.where}`, [realm.id]);
    out.tables[`${t.schema}.${t.table}`] = rows[0]?.rows ?? [];
  }
  if (files) {
    for (const a of (out.tables['uploads.attachment'] ?? []) as Array<{ path_id: string; content_type?: string }>) {
      const body = await files.read(a.path_id);
      if (body) out.files[a.path_id] = { content_type: a.content_type ?? 'application/octet-stream', base64: body.toString('base64') };
    }
    // Thumbnails of uploaded images, stored by the uploads service at thumbnail/<path_id>/<format>
    // (services/uploads/src/lib/thumbnail-image.ts), so imported previews keep working.
    const pathIds = new Map((out.tables['uploads.attachment'] ?? []).map((a) => [Number((a as { id: number }).id), (a as { path_id: string }).path_id]));
    for (const i of (out.tables['uploads.image_attachment'] ?? []) as Array<{ attachment_id: number; thumbnail_formats: string[] }>) {
      for (const format of i.thumbnail_formats) {
        const key = `thumbnail/${pathIds.get(Number(i.attachment_id))}/${format}`;
        const body = await files.read(key);
        if (body) out.files[key] = { content_type: `image/${format.split('.').pop()}`, base64: body.toString('base64') };
      }
    }
    // Custom emoji images, deactivated ones too (old messages still show them): the resized
    // image, the upload as it came, and an animated one's still frame, at the keys the uploads
    // service gives them (services/uploads/src/lib/emoji-names.ts emojiFiles).
    for (const e of (out.tables['uploads.realm_emoji'] ?? []) as Array<{ id: number; file_name: string; is_animated: boolean }>) {
      const dir = `avatars/${realm.id}/emoji/images`;
      const keys: Array<[string, string]> = [
        [`${dir}/${e.file_name}`, imageType(e.file_name)],
        [`${dir}/${e.file_name}.original`, 'application/octet-stream'],
      ];
      if (e.is_animated) keys.push([`${dir}/still/${e.id}.png`, 'image/png']);
      for (const [key, contentType] of keys) {
        const body = await files.read(key);
        if (body) out.files[key] = { content_type: contentType, base64: body.toString('base64') };
      }
    }
  }
  return out;
}

/** An image's content type from its file name's extension. */
function imageType(fileName: string): string {
  const ext = fileName.split('.').pop()?.toLowerCase() ?? '';
  return ({ png: 'image/png', gif: 'image/gif', webp: 'image/webp', jpg: 'image/jpeg', jpeg: 'image/jpeg' } as Record<string, string>)[ext] ?? 'application/octet-stream';
}

/**
 * Every sequence continues after the imported ids: identity columns, columns defaulting to a
 * sequence, and `<table>_id_seq` sequences the code draws ids from itself (message ids).
 * Never moved backwards: the largest id of the table, other realms' rows included.
 */
async function advanceSequences(c: Queryable, archive: RealmArchive): Promise<void> {
  const { rows } = await c.query<{ seq: string; tbl: string; col: string }>(
    `SELECT pg_get_serial_sequence(quote_ident(table_schema) || '.' || quote_ident(table_name), column_name) AS seq,
            table_schema || '.' || table_name AS tbl, column_name AS col
       FROM information_schema.columns
      WHERE table_schema = ANY($1) AND pg_get_serial_sequence(quote_ident(table_schema) || '.' || quote_ident(table_name), column_name) IS NOT NULL
     UNION
     SELECT substring(column_default FROM 'nextval\\(''([^'']+)''') AS seq, table_schema || '.' || table_name, column_name
       FROM information_schema.columns WHERE table_schema = ANY($1) AND column_default LIKE 'nextval(%'
     UNION
     SELECT s.schemaname || '.' || s.sequencename, c.table_schema || '.' || c.table_name, c.column_name
       FROM pg_sequences s JOIN information_schema.columns c
         ON c.table_schema = s.schemaname AND s.sequencename = c.table_name || '_id_seq' AND c.column_name = 'id'
      WHERE s.schemaname = ANY($1)`,
    [[...SCHEMAS]],
  );
  for (const r of rows) {
    if (!r.seq || !(archive.tables[r.tbl] ?? []).length) continue;
    const [schema, table] = r.tbl.split('.') as [string, string];
    await c.query(`SELECT setval($1::regclass, greatest((SELECT coalesce(max("${r.col}"), 0) FROM ${q2(schema, table)}), (SELECT last_value FROM ${r.seq})))`, [r.seq]);
  }
}

/**
 * Writes an archive's rows (in one transaction) and files. The target must have every
 * service's schema migrated (start the services once, or run deploy/migrate.mjs), and
 * neither the realm's subdomain nor any of its row ids may be taken.
 */
export async function importRealm(pool: Pool, archive: RealmArchive, files?: ArchiveFiles): Promise<{ realm_id: number; rows: number; files: number }> {
  if (archive.format !== ARCHIVE_FORMAT || archive.version !== ARCHIVE_VERSION) throw new ArchiveError(`not a ${ARCHIVE_FORMAT} version ${ARCHIVE_VERSION} document`);
  const rows = await transaction(pool, async (c) => {
    let inserted = 0;
    const present = new Map((await tablesOf(c)).map((t) => [`${t.schema}.${t.table}`, t]));
    const missing = Object.keys(archive.tables).filter((n) => !present.has(n));
    if (missing.length) throw new ArchiveError(`the target database lacks ${missing.join(', ')}: migrate every service first`);
    const taken = await c.query('SELECT 1 FROM users.realm WHERE subdomain = $1 OR id = $2', [archive.realm.subdomain, archive.realm.id]);
    if (taken.rowCount) throw new ArchiveError(`realm '${archive.realm.subdomain}' (or its id ${archive.realm.id}) already exists here`);
    for (const name of await insertOrder(c, Object.keys(archive.tables))) {
      const data = archive.tables[name] ?? [];
      if (data.length === 0) continue;
      const [schema, table] = name.split('.') as [string, string];
      try {
        // json_populate_recordset converts each field with the column's own input function.
        const cols = (present.get(name)?.writable ?? []).map((col) => `"${col}"`).join(', ');
        const r = await c.query(`INSERT INTO ${q2(schema, table)} (${cols}) OVERRIDING SYSTEM VALUE SELECT ${cols} FROM json_populate_recordset(NULL::${q2(schema, table)}, $1::json)`, [JSON.stringify(data)]);
        inserted += r.rowCount ?? 0;
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === '23505') throw new ArchiveError(`${name}: rows with these ids or keys already exist here (${(e as Error).message})`);
        throw e;
      }
    }
    await advanceSequences(c, archive);
    return inserted;
  });
  let written = 0;
  if (files) {
    for (const [key, f] of Object.entries(archive.files)) {
      await files.write(key, Buffer.from(f.base64, 'base64'), f.content_type);
      written++;
    }
  }
  return { realm_id: archive.realm.id, rows, files: written };
}

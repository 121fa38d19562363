/**
 * A realm as one JSON document, for backups and moving a realm to another server: every row
 * of every service schema that belongs to the realm (read models included, so the services
 * need no replay after an import), and the bytes of its uploaded files. Rows keep their ids,
 * so an import goes into a database where those ids are free (a new server, or this one after
 * the realm's rows were removed); it refuses otherwise rather than merge. Event queues are
 * not exported: clients re-register, as after any restart that loses Redis.
 *
 * Which rows belong to a realm is read from the catalog, not listed by hand, so a new table
 * is covered or the export stops naming it: a `realm_id` column, the realm table itself, or
 * a column naming a user, message, stream, recipient, attachment, group or profile field of
 * the realm.
 */
import type { Queryable } from '../db/index.js';

export const SCHEMAS = ['users', 'subscriptions', 'messages', 'drafts', 'uploads'] as const;
/** Bookkeeping, not realm data: outboxes (relayed or dead), migration versions. */
const SKIPPED = new Set(['outbox', 'outbox_dead', 'schema_migrations']);
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

interface TableInfo {
  schema: string;
  table: string;
  columns: string[];
  /** Columns an INSERT may set (generated ones are computed again). */
  writable: string[];
}

async function tablesOf(q: Queryable): Promise<TableInfo[]> {
  const { rows } = await q.query<TableInfo>(
    `SELECT c.table_schema AS schema, c.table_name AS "table", array_agg(c.column_name::text ORDER BY c.ordinal_position) AS columns,
            array_agg(c.column_name::text ORDER BY c.ordinal_position) FILTER (WHERE c.is_generated = 'NEVER') AS writable
       FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE t.table_type = 'BASE TABLE' AND c.table_schema = ANY($1)
      GROUP BY 1, 2 ORDER BY 1, 2`,
    [[...SCHEMAS]],
  );
  return rows.filter((r) => !SKIPPED.has(r.table));
}

const q2 = (schema: string, table: string) => `"${schema}"."${table}"`;

/**
 * The WHERE clause selecting a table's rows of realm $1, or undefined when nothing ties the
 * table to a realm. Ids of realm-wide things are unique across schemas (each schema's copy of
 * a user or stream carries the owner's id).
 */
function realmFilter(t: TableInfo): string | undefined {
  const has = (c: string) => t.columns.includes(c);
  // users.realm, and each schema's copy of it (the directory read model).
  if (t.table === 'realm') return 'id = $1';
  if (has('realm_id')) return 'realm_id = $1';
  const users = 'SELECT id FROM users.user_profile WHERE realm_id = $1';
  if (has('user_id')) return `user_id IN (${users})`;
  if (has('user_profile_id')) return `user_profile_id IN (${users})`;
  if (has('message_id')) return `message_id IN (SELECT id FROM messages.message WHERE realm_id = $1)`;
  if (has('stream_id')) return `stream_id IN (SELECT id FROM subscriptions.stream WHERE realm_id = $1)`;
  if (has('recipient_id')) return `recipient_id IN (SELECT id FROM messages.recipient WHERE realm_id = $1)`;
  if (has('attachment_id')) return `attachment_id IN (SELECT id FROM uploads.attachment WHERE realm_id = $1)`;
  if (has('field_id')) return `field_id IN (SELECT id FROM users.custom_profile_field WHERE realm_id = $1)`;
  if (has('group_id')) return `group_id IN (SELECT id FROM users.user_group WHERE realm_id = $1)`;
  if (has('user_group_id')) return `user_group_id IN (SELECT id FROM users.user_group WHERE realm_id = $1)`;
  return undefined;
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
  const unknown = tables.filter((t) => !realmFilter(t)).map((t) => `${t.schema}.${t.table}`);
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
    const { rows } = await q.query<{ rows: unknown[] }>(`SELECT coalesce(json_agg(x), '[]'::json) AS rows FROM ${q2(t.schema, t.table)} x WHERE ${realmFilter(t)}`, [realm.id]);
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
  }
  return out;
}

/** Tables in an order where each comes after the tables its foreign keys point to. */
async function insertOrder(q: Queryable, names: string[]): Promise<string[]> {
  const { rows } = await q.query<{ child: string; parent: string }>(
    `SELECT cn.nspname || '.' || c.relname AS child, pn.nspname || '.' || p.relname AS parent
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
       JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = p.relnamespace
      WHERE k.contype = 'f' AND cn.nspname = ANY($1)`,
    [[...SCHEMAS]],
  );
  const parents = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
  for (const r of rows) if (r.child !== r.parent && parents.has(r.child) && parents.has(r.parent)) parents.get(r.child)?.add(r.parent);
  const order: string[] = [];
  const done = new Set<string>();
  const visit = (n: string, path: Set<string>) => {
    if (done.has(n) || path.has(n)) return;
    path.add(n);
    for (const p of parents.get(n) ?? []) visit(p, path);
    done.add(n);
    order.push(n);
  };
  for (const n of names) visit(n, new Set());
  return order;
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
export async function importRealm(pool: { connect(): Promise<Queryable & { release(): void }> }, archive: RealmArchive, files?: ArchiveFiles): Promise<{ realm_id: number; rows: number; files: number }> {
  if (archive.format !== ARCHIVE_FORMAT || archive.version !== ARCHIVE_VERSION) throw new ArchiveError(`not a ${ARCHIVE_FORMAT} version ${ARCHIVE_VERSION} document`);
  const c = await pool.connect();
  let rows = 0;
  try {
    await c.query('BEGIN');
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
        rows += r.rowCount ?? 0;
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === '23505') throw new ArchiveError(`${name}: rows with these ids or keys already exist here (${(e as Error).message})`);
        throw e;
      }
    }
    await advanceSequences(c, archive);
    await c.query('COMMIT');
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
  let written = 0;
  if (files) {
    for (const [key, f] of Object.entries(archive.files)) {
      await files.write(key, Buffer.from(f.base64, 'base64'), f.content_type);
      written++;
    }
  }
  return { realm_id: archive.realm.id, rows, files: written };
}

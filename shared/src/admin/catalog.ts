/**
 * Which rows of which tables belong to a realm, read from the catalog rather than listed by
 * hand, so a new table is covered or the realm commands (export, import, deletion) stop
 * naming it: a `realm_id` column, the realm table itself, or a column naming a user,
 * message, stream, recipient, attachment, group or profile field of the realm.
 */
import type { Queryable } from '../db/index.js';

export const SCHEMAS = ['users', 'subscriptions', 'messages', 'drafts', 'uploads'] as const;
/** Bookkeeping, not realm data: outboxes (relayed or dead), migration versions. */
const SKIPPED = new Set(['outbox', 'outbox_dead', 'schema_migrations']);

export interface TableInfo {
  schema: string;
  table: string;
  columns: string[];
  /** Columns an INSERT may set (generated ones are computed again). */
  writable: string[];
}

export async function tablesOf(q: Queryable): Promise<TableInfo[]> {
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

export const q2 = (schema: string, table: string) => `"${schema}"."${table}"`;
export const nameOf = (t: TableInfo) => `${t.schema}.${t.table}`;

/** Columns naming a realm-wide thing, and the table (with a `realm_id`) that says whose it is. */
const OWNED_THROUGH: ReadonlyArray<[column: string, owner: string]> = [
  ['user_id', 'users.user_profile'],
  ['user_profile_id', 'users.user_profile'],
  ['message_id', 'messages.message'],
  ['stream_id', 'subscriptions.stream'],
  ['recipient_id', 'messages.recipient'],
  ['attachment_id', 'uploads.attachment'],
  ['field_id', 'users.custom_profile_field'],
  ['group_id', 'users.user_group'],
  ['user_group_id', 'users.user_group'],
];

export interface RealmFilter {
  /** The WHERE clause selecting the table's rows of realm $1. */
  where: string;
  /** The table the clause reads to tell (its rows must still be there when it runs). */
  through?: string;
}

/**
 * How to select a table's rows of a realm, or undefined when nothing ties the table to one.
 * Ids of realm-wide things are unique across schemas (each schema's copy of a user or stream
 * carries the owner's id).
 */
export function realmFilter(t: TableInfo): RealmFilter | undefined {
  // users.realm, and each schema's copy of it (the directory read model).
  if (t.table === 'realm') return { where: 'id = $1' };
  if (t.columns.includes('realm_id')) return { where: 'realm_id = $1' };
  for (const [column, owner] of OWNED_THROUGH) {
    if (t.columns.includes(column)) return { where: `${column} IN (SELECT id FROM ${owner} WHERE realm_id = $1)`, through: owner };
  }
  return undefined;
}

/** The tables no realm filter covers, named; the realm commands refuse to run with any. */
export function unattributable(tables: TableInfo[]): string[] {
  return tables.filter((t) => !realmFilter(t)).map(nameOf);
}

/** Foreign keys between the service schemas' tables: [child, parent] names. */
async function foreignKeys(q: Queryable): Promise<Array<{ child: string; parent: string }>> {
  const { rows } = await q.query<{ child: string; parent: string }>(
    `SELECT cn.nspname || '.' || c.relname AS child, pn.nspname || '.' || p.relname AS parent
       FROM pg_constraint k
       JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace cn ON cn.oid = c.relnamespace
       JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = p.relnamespace
      WHERE k.contype = 'f' AND cn.nspname = ANY($1)`,
    [[...SCHEMAS]],
  );
  return rows.filter((r) => r.child !== r.parent);
}

/** `names` ordered so each comes after every name `after` lists for it (cycles broken anywhere). */
function ordered(names: string[], after: Map<string, Set<string>>): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  const visit = (n: string, path: Set<string>) => {
    if (done.has(n) || path.has(n)) return;
    path.add(n);
    for (const p of after.get(n) ?? []) visit(p, path);
    done.add(n);
    order.push(n);
  };
  for (const n of names) visit(n, new Set());
  return order;
}

/** Tables in an order where each comes after the tables its foreign keys point to. */
export async function insertOrder(q: Queryable, names: string[]): Promise<string[]> {
  const parents = new Map<string, Set<string>>(names.map((n) => [n, new Set()]));
  for (const r of await foreignKeys(q)) if (parents.has(r.child) && parents.has(r.parent)) parents.get(r.child)?.add(r.parent);
  return ordered(names, parents);
}

/**
 * Tables in an order their realm's rows can be deleted in: each after the tables whose
 * foreign keys point to it, and after the tables whose realm filter reads it (a message's
 * reactions are found through the message, so they go first).
 */
export async function deleteOrder(q: Queryable, tables: TableInfo[]): Promise<TableInfo[]> {
  const byName = new Map(tables.map((t) => [nameOf(t), t]));
  const first = new Map<string, Set<string>>([...byName.keys()].map((n) => [n, new Set()]));
  for (const r of await foreignKeys(q)) if (byName.has(r.child)) first.get(r.parent)?.add(r.child);
  for (const t of tables) {
    const through = realmFilter(t)?.through;
    if (through) first.get(through)?.add(nameOf(t));
  }
  return ordered([...byName.keys()], first).map((n) => byName.get(n) as TableInfo);
}

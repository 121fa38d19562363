/**
 * Deleting a realm for good (Zulip's `manage.py delete_realm`): every service schema's rows of
 * the realm (the catalog says which, see catalog.ts), its stored files and its Redis state.
 * Only a deactivated realm: its users are refused already, so nothing new arrives while it is
 * taken apart.
 *
 * Files and Redis state go first and the rows last, in one transaction: a run interrupted
 * anywhere leaves the realm's row in place, so the same command run again finishes the job
 * (removing what is already gone is no error). Rows first would lose, with an interrupted
 * run, the only record of which files and keys were the realm's.
 */
import { randomUUID } from 'node:crypto';
import { transaction, type Pool, type Queryable } from '../db/index.js';
import { indexGenerationKey, queueKeys, realmPublicQueuesKey, userQueuesKey } from '../event-queues/keys.js';
import { presenceRealmKey } from '../presence/store.js';
import type { Redis } from '../redis/index.js';
import { SCHEMAS, deleteOrder, nameOf, q2, realmFilter, tablesOf, unattributable } from './catalog.js';

/** Refused or impossible: the realm is unknown, still active, or a table cannot be attributed. */
export class RealmDeletionError extends Error {
  override name = 'RealmDeletionError';
}

export interface RealmDeletion {
  realm_id: number;
  subdomain: string;
  /** Rows deleted, all tables together, and by `schema.table` (tables with none left out). */
  rows: number;
  tables: Record<string, number>;
  /** Stored objects removed (uploads, thumbnails, emoji images). */
  files: number;
  /** Redis keys removed; null when no Redis was given. */
  redis_keys: number | null;
}

export interface RealmDeletionSteps {
  /** Removes every stored file of the realm; how many there were. */
  removeFiles(realmId: number): Promise<number>;
  /** Removes the realm's Redis state (dropRealmRedisState); absent without a reachable Redis. */
  dropRedisState?(realmId: number, userIds: number[]): Promise<number>;
}

async function deletableRealm(q: Queryable, subdomain: string): Promise<number> {
  const { rows } = await q.query<{ id: string; deactivated: boolean }>('SELECT id, deactivated FROM users.realm WHERE subdomain = $1', [subdomain]);
  const realm = rows[0];
  if (!realm) throw new RealmDeletionError(`no realm with subdomain '${subdomain}'`);
  if (!realm.deactivated) throw new RealmDeletionError(`realm '${subdomain}' is active: deactivate it first (deactivate-realm)`);
  return Number(realm.id);
}

export async function deleteRealm(pool: Pool, subdomain: string, steps: RealmDeletionSteps): Promise<RealmDeletion> {
  const realmId = await deletableRealm(pool, subdomain);
  const tables = await tablesOf(pool);
  const unknown = unattributable(tables);
  if (unknown.length) throw new RealmDeletionError(`cannot tell which rows of ${unknown.join(', ')} belong to a realm; nothing deleted`);
  const order = await deleteOrder(pool, tables);
  const { rows: users } = await pool.query<{ id: string }>('SELECT id FROM users.user_profile WHERE realm_id = $1', [realmId]);

  const files = await steps.removeFiles(realmId);
  const redisKeys = steps.dropRedisState ? await steps.dropRedisState(realmId, users.map((u) => Number(u.id))) : null;

  const deleted: Record<string, number> = {};
  const count = (name: string, n: number | null) => {
    if (n) deleted[name] = n;
  };
  await transaction(pool, async (c) => {
    // Reactivated meanwhile? Then it stays (its files are gone, as the operator asked); the
    // lock keeps it deactivated until the rows are.
    const still = await c.query<{ deactivated: boolean }>('SELECT deactivated FROM users.realm WHERE id = $1 FOR UPDATE', [realmId]);
    if (!still.rows[0]?.deactivated) throw new RealmDeletionError(`realm '${subdomain}' was reactivated while its files were removed; its rows are kept`);
    for (const t of order) count(nameOf(t), (await c.query(`DELETE FROM ${q2(t.schema, t.table)} WHERE ${realmFilter(t)?.where}`, [realmId])).rowCount);
    // Events about the realm not yet relayed (their consumers would write read-model rows
    // for a realm that is gone), and the dead letters an operator kept: they hold its data too.
    for (const schema of SCHEMAS) {
      for (const table of ['outbox', 'outbox_dead']) {
        count(`${schema}.${table}`, (await c.query(`DELETE FROM ${q2(schema, table)} WHERE payload->>'realm_id' = $1::text`, [realmId])).rowCount);
      }
    }
  });
  const rows = Object.values(deleted).reduce((a, n) => a + n, 0);
  return { realm_id: realmId, subdomain, rows, tables: deleted, files, redis_keys: redisKeys };
}

/** A Redis glob matching `s` literally. */
const literalGlob = (s: string) => s.replace(/[*?[\]\\]/g, (ch) => `\\${ch}`);

/**
 * Removes a realm's Redis state: its presence keys (found by their common prefix) and its
 * event queues with their indexes (found from the users' and the realm's indexes; deactivation
 * normally dropped them already). Credential tokens stay: renewed on deactivation, they keep
 * every gateway refusing the realm's cached keys, and expire by themselves. Returns how many
 * keys went.
 */
export async function dropRealmRedisState(redis: Redis, prefix: string, realmId: number, userIds: readonly number[]): Promise<number> {
  let removed = 0;
  const pattern = `${literalGlob(presenceRealmKey(prefix, realmId))}*`;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (keys.length) removed += await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');

  const indexes = [...userIds.map((id) => userQueuesKey(prefix, id)), realmPublicQueuesKey(prefix, realmId)];
  const queueIds = new Set<string>();
  for (const key of indexes) for (const id of await redis.smembers(key)) queueIds.add(id);
  for (const id of queueIds) {
    const keys = queueKeys(prefix, id);
    // A queue indexed here is the realm's unless its meta says otherwise (an index may be stale).
    const owner = await redis.hget(keys[0], 'realm_id');
    if (owner === null || Number(owner) === realmId) removed += await redis.del(...keys);
  }
  const indexesRemoved = await redis.del(...indexes);
  // The events service's copies of the indexes are good only while the generation stays.
  if (indexesRemoved) await redis.set(indexGenerationKey(prefix), randomUUID());
  return removed + indexesRemoved;
}

/**
 * /bot_storage: a small key/value store per user, meant for bots (Zulip's lib/bot_storage;
 * like Zulip, any authenticated user may use their own). The total size of keys and values
 * is capped; a request that would pass the cap changes nothing.
 */
import type { Actor } from '@zc/shared/contracts';
import { transaction } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import type { UsersDeps } from '../deps.js';
import { botStorageStore } from '../store/bot-storage-store.js';

/** Zulip's USER_STATE_SIZE_LIMIT, in characters of keys plus values. */
export const BOT_STORAGE_SIZE_LIMIT = 10_000_000;

const keyDoesNotExist = () => badRequest('Key does not exist.');

const nullCharacter = () => badRequest('Null characters are not allowed.');

/** Zulip treats a missing or empty key list as "every key". */
function keysOrAll(keys: readonly string[] | undefined): string[] | null {
  if (!keys || keys.length === 0) return null;
  // PostgreSQL text cannot hold NUL: such a key cannot exist.
  if (keys.some((k) => k.includes('\u0000'))) throw keyDoesNotExist();
  return [...new Set(keys)];
}

/** GET /bot_storage: the given entries (every key must exist), or all of them. */
export async function getBotStorage(deps: UsersDeps, actor: Actor, keys?: readonly string[]): Promise<Record<string, string>> {
  const wanted = keysOrAll(keys);
  const rows = await botStorageStore.list(deps.pool, actor.user_id, wanted);
  if (wanted && rows.length < wanted.length) throw keyDoesNotExist();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

/** PUT /bot_storage: sets the entries, refusing the whole request if the storage would outgrow the limit. */
export async function checkUpdateBotStorage(deps: UsersDeps, actor: Actor, storage: Readonly<Record<string, string>>): Promise<void> {
  const entries = Object.entries(storage);
  if (entries.some(([k, v]) => k.includes('\u0000') || v.includes('\u0000'))) throw nullCharacter();
  await transaction(deps.pool, async (tx) => {
    await botStorageStore.lockOwner(tx, actor.user_id);
    const keys = entries.map(([k]) => k);
    const added = entries.reduce((n, [k, v]) => n + [...k].length + [...v].length, 0);
    const replaced = keys.length ? await botStorageStore.size(tx, actor.user_id, keys) : 0;
    const total = (await botStorageStore.size(tx, actor.user_id, null)) - replaced + added;
    if (total > BOT_STORAGE_SIZE_LIMIT) {
      throw badRequest(`Request exceeds storage limit by ${total - BOT_STORAGE_SIZE_LIMIT} characters. The limit is ${BOT_STORAGE_SIZE_LIMIT} characters.`);
    }
    await botStorageStore.put(tx, actor.user_id, entries);
  });
}

/** DELETE /bot_storage: removes the given entries (all must exist, else nothing goes), or all of them. */
export async function checkRemoveBotStorage(deps: UsersDeps, actor: Actor, keys?: readonly string[]): Promise<void> {
  const wanted = keysOrAll(keys);
  await transaction(deps.pool, async (tx) => {
    const removed = await botStorageStore.delete(tx, actor.user_id, wanted);
    if (wanted && removed < wanted.length) throw keyDoesNotExist();
  });
}

/**
 * Custom emoji: adding one (Zulip's upload_emoji and check_add_realm_emoji) and deactivating
 * one (check_remove_custom_emoji). The checks that need no bytes run before the body is read;
 * the image is resized, its files stored, then the row and the events are written in one
 * transaction. A failure after the files were stored removes them again.
 *
 * Every change sends the realm's whole emoji set to every active user (Zulip's
 * notify_realm_emoji) and announces the changed emoji to other services (the messages
 * service renders `:name:` and checks realm_emoji reactions from it).
 */
import { Readable } from 'node:stream';
import { eventsInbox, uploadsEvents, type Actor, type StreamTarget } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { hasPolicyPermission, isAdminRole, realmSettings } from '@zc/shared/policy';
import type { UploadsDeps } from '../deps.js';
import { resizeEmoji } from '../lib/emoji-image.js';
import { emojiFiles, isBuiltInEmojiName, normaliseEmojiName, realmEmojiDict, toApiRealmEmoji } from '../lib/emoji-names.js';
import { emojiDoesNotExist, emojiNameTaken, exactlyOneFile, fileTooLarge, insufficientPermission, notEmojiAuthor, onlyAdminsOverrideBuiltIn } from '../lib/errors.js';
import { signToken } from '../lib/tokens.js';
import { EmojiNameTaken, type RealmEmojiRow } from '../store/realm-emoji-store.js';
import { MULTIPART_OVERHEAD_BYTES } from './uploads.js';

/** Seconds an emoji upload grant stays valid before its body starts. */
const UPLOAD_GRANT_TTL = 60;

export const maxEmojiBytes = (deps: UploadsDeps) => deps.settings.maxEmojiFileSizeMib * 1024 * 1024;

/** Zulip's can_add_custom_emoji: the realm's add_custom_emoji_policy at our feature level. */
async function assertMayAdd(deps: UploadsDeps, actor: Actor): Promise<void> {
  const realm = await deps.directory.realmFor(actor);
  const me = await deps.directory.requireUser(deps.pool, actor.realm_id, actor.user_id);
  const s = realmSettings(realm.settings);
  // The role the gateway authenticated is the current one; the directory gives the join date (full members).
  if (!hasPolicyPermission({ role: actor.role, date_joined: me.date_joined }, s.add_custom_emoji_policy, s.waiting_period_threshold)) throw insufficientPermission();
}

/** POST /realm/emoji/{name} before the body: every check that needs no byte of the image, in Zulip's order. */
export async function checkBeginEmojiUpload(deps: UploadsDeps, actor: Actor, rawName: string, contentLength: number | null, multipart: boolean): Promise<StreamTarget> {
  const name = normaliseEmojiName(rawName);
  await assertMayAdd(deps, actor);
  if (await deps.emojiStore.findActiveByName(deps.pool, actor.realm_id, name)) throw emojiNameTaken();
  if (!multipart) throw exactlyOneFile();
  if (isBuiltInEmojiName(name) && !isAdminRole(actor.role)) throw onlyAdminsOverrideBuiltIn();
  if (contentLength !== null && contentLength > maxEmojiBytes(deps) + MULTIPART_OVERHEAD_BYTES) throw fileTooLarge(deps.settings.maxEmojiFileSizeMib);
  const token = signToken(deps.keys.emojiUpload, { r: actor.realm_id, u: actor.user_id, n: name }, UPLOAD_GRANT_TTL, deps.now());
  return { kind: 'stream', url: `${deps.internalUrl}/v1/emoji?token=${encodeURIComponent(token)}` };
}

/** The realm's whole set to its active users, and the changed emoji to other services. */
async function notifyRealmEmoji(deps: UploadsDeps, tx: Queryable, realmId: number, changed: RealmEmojiRow): Promise<void> {
  // One after the other: a transaction's client runs one query at a time.
  const all = await deps.emojiStore.listForRealm(tx, realmId);
  const people = await deps.directory.realmPeople(tx, realmId);
  await addToOutbox(tx, 'uploads', eventsInbox.notify, {
    realm_id: realmId,
    users: people.everyone,
    event: { type: 'realm_emoji', op: 'update', realm_emoji: realmEmojiDict(all) },
  });
  await addToOutbox(tx, 'uploads', uploadsEvents.realmEmojiChanged, { realm_id: realmId, emoji: toApiRealmEmoji(changed) });
}

/** Resizes and stores an uploaded emoji image (already read whole, within the size limit) and records it. */
export async function doAddRealmEmoji(deps: UploadsDeps, author: { realm_id: number; user_id: number }, name: string, data: Buffer): Promise<RealmEmojiRow> {
  const made = await resizeEmoji(data, { maxPixels: deps.settings.imageMaxPixels, timeoutSeconds: deps.settings.imageTimeoutSeconds });
  await deps.directory.realmFor(author);
  const id = await deps.emojiStore.reserveId(deps.pool);
  const files = emojiFiles(author.realm_id, id, made.ext);
  const stored: string[] = [];
  const put = async (key: string, bytes: Buffer, contentType: string) => {
    stored.push(key);
    await deps.storage.write(key, Readable.from([bytes]), contentType);
  };
  try {
    await put(files.originalKey, data, made.contentType);
    await put(files.imageKey, made.image, made.contentType);
    if (made.still) await put(files.stillKey, made.still, 'image/png');
    return await transaction(deps.pool, async (tx) => {
      await deps.emojiStore.lockRealm(tx, author.realm_id);
      const row = await deps.emojiStore.insert(tx, {
        id,
        realm_id: author.realm_id,
        name,
        author_id: author.user_id,
        file_name: files.fileName,
        is_animated: made.still !== undefined,
        deactivated: false,
      });
      await notifyRealmEmoji(deps, tx, author.realm_id, row);
      return row;
    });
  } catch (e) {
    for (const key of stored) await deps.storage.remove(key).catch((err) => deps.log.warn({ err, key }, 'could not remove a refused emoji image'));
    throw e instanceof EmojiNameTaken ? emojiNameTaken() : e;
  }
}

/** DELETE /realm/emoji/{name}: administrators, or the emoji's author. Files stay: old messages still show the emoji. */
export async function checkDeactivateRealmEmoji(deps: UploadsDeps, actor: Actor, name: string): Promise<void> {
  await deps.directory.realmFor(actor);
  await transaction(deps.pool, async (tx) => {
    await deps.emojiStore.lockRealm(tx, actor.realm_id);
    const emoji = await deps.emojiStore.findActiveByName(tx, actor.realm_id, name);
    if (!emoji) throw emojiDoesNotExist(name);
    if (!isAdminRole(actor.role) && emoji.author_id !== actor.user_id) throw notEmojiAuthor();
    const row = await deps.emojiStore.deactivate(tx, actor.realm_id, emoji.id);
    if (!row) throw emojiDoesNotExist(name);
    await notifyRealmEmoji(deps, tx, actor.realm_id, row);
  });
}

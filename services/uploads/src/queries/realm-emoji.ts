/** Read paths of custom emoji: the realm's list, the owner's answer to other services, /register, and the public images. */
import type { Actor, RealmEmoji, StreamTarget } from '@zc/shared/contracts';
import { readWithSnapshot } from '@zc/shared/db';
import type { UploadsDeps } from '../deps.js';
import { contentTypeOfEmojiExtension } from '../lib/emoji-image.js';
import { emojiFiles, parseEmojiImagePath, realmEmojiDict, toApiRealmEmoji } from '../lib/emoji-names.js';
import { fileNotFound } from '../lib/errors.js';
import { signToken } from '../lib/tokens.js';

/** Seconds the gateway has to start streaming an emoji image after being told where from. */
const INTERNAL_DOWNLOAD_TTL = 30;
/** Seconds a signed S3 URL of an emoji image stays valid (the image never changes). */
const SIGNED_URL_TTL = 300;

/** GET /realm/emoji: every custom emoji of the realm, deactivated ones included. */
export async function listRealmEmoji(deps: UploadsDeps, actor: Actor): Promise<{ emoji: Record<string, RealmEmoji> }> {
  return { emoji: realmEmojiDict(await deps.emojiStore.listForRealm(deps.pool, actor.realm_id)) };
}

/** The emoji of the realm with these names or ids (ids that are not numbers name nothing). */
export async function findRealmEmoji(deps: UploadsDeps, realmId: number, names: readonly string[], ids: readonly string[]): Promise<{ emoji: RealmEmoji[] }> {
  const numericIds = ids.filter((id) => /^[1-9][0-9]{0,14}$/.test(id)).map(Number);
  const rows = await deps.emojiStore.findByNamesOrIds(deps.pool, realmId, names, numericIds);
  return { emoji: rows.map(toApiRealmEmoji) };
}

/** /register's `realm_emoji`, read in one snapshot so the events service can drop what it already holds. */
export async function getRegisterState(deps: UploadsDeps, actor: Actor, fetch: readonly string[]): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const { snapshot, result } = await readWithSnapshot(deps.pool, async (q) => {
    if (!fetch.includes('realm_emoji')) return {};
    return { realm_emoji: realmEmojiDict(await deps.emojiStore.listForRealm(q, actor.realm_id)) };
  });
  return { snapshot, state: result };
}

/**
 * GET /user_avatars/{realm_id}/emoji/images/{file}: public, as Zulip serves emoji (they show
 * in notifications and to anyone with a message); deactivated emoji still show in old
 * messages. Only an existing emoji's own file names answer.
 */
export async function emojiImageTarget(deps: UploadsDeps, realmId: number, file: string): Promise<StreamTarget> {
  const wanted = parseEmojiImagePath(file);
  if (!wanted) throw fileNotFound();
  const row = await deps.emojiStore.findById(deps.pool, realmId, wanted.id);
  if (!row) throw fileNotFound();
  const files = emojiFiles(realmId, row.id, row.file_name.slice(row.file_name.lastIndexOf('.') + 1));
  let key: string;
  let contentType: string;
  if (wanted.still) {
    if (!row.is_animated) throw fileNotFound();
    key = files.stillKey;
    contentType = 'image/png';
  } else {
    if (`${wanted.id}.${wanted.ext}` !== row.file_name) throw fileNotFound();
    key = files.imageKey;
    contentType = contentTypeOfEmojiExtension(wanted.ext);
  }
  const signed = await deps.storage.signedDownloadUrl(key, { ttlSeconds: SIGNED_URL_TTL, contentType, contentDisposition: 'inline' });
  if (signed) return { kind: 'redirect', url: signed };
  const token = signToken(deps.keys.emojiImage, { k: key, t: contentType }, INTERNAL_DOWNLOAD_TTL, deps.now());
  return { kind: 'stream', url: `${deps.internalUrl}/v1/emoji-image?token=${encodeURIComponent(token)}` };
}

/** Read paths: the caller's attachments, and whether (and how) a caller may download a file. */
import { messagesRpc, THUMBNAIL_FORMATS, type Actor, type Attachment, type StreamTarget, type ThumbnailFormat, type UploadedImage } from '@zc/shared/contracts';
import type { UploadsDeps } from '../deps.js';
import { toApiAttachment } from '../lib/attachment-view.js';
import { servedHeaders } from '../lib/content-headers.js';
import { fileNotFound, invalidToken, notAuthorizedForFile } from '../lib/errors.js';
import { isPathIdShaped } from '../lib/file-names.js';
import { thumbnailKey } from '../lib/thumbnail-image.js';
import { signToken, verifyToken } from '../lib/tokens.js';
import type { AttachmentRow } from '../store/attachment-store.js';

/** Seconds a temporary URL (GET /api/v1/user_uploads/...) stays valid, as Zulip's. */
const TEMPORARY_URL_TTL = 60;
/** Seconds the gateway has to start streaming after being told where from. */
const INTERNAL_DOWNLOAD_TTL = 30;

/** GET /attachments. */
export async function listAttachments(deps: UploadsDeps, actor: Actor): Promise<{ attachments: Attachment[]; upload_space_used: number }> {
  const rows = await deps.store.listOwned(deps.pool, actor.user_id);
  const links = await deps.store.messagesOf(deps.pool, rows.map((r) => r.id));
  return {
    attachments: rows.map((r) => toApiAttachment(r, links)),
    upload_space_used: await deps.store.spaceUsed(deps.pool, actor.realm_id),
  };
}

/**
 * Zulip's validate_attachment_request: the uploader, or anyone who may read a message linking
 * the file. Another realm's file, a deleted one and a malformed path are all "not found".
 */
export async function accessFile(deps: UploadsDeps, actor: Actor, realmId: number, pathId: string): Promise<AttachmentRow> {
  if (realmId !== actor.realm_id || !isPathIdShaped(pathId) || !pathId.startsWith(`${realmId}/`)) throw fileNotFound();
  const row = await deps.store.findByPathId(deps.pool, pathId);
  if (!row || row.realm_id !== actor.realm_id) throw fileNotFound();
  if (row.owner_id === actor.user_id) return row;
  const links = await deps.store.messagesOf(deps.pool, [row.id]);
  if (links.length > 0) {
    const { readable } = await deps.bus.request(messagesRpc.canReadAny, { actor, message_ids: links.map((l) => l.message_id) });
    if (readable) return row;
  }
  throw notAuthorizedForFile();
}

/**
 * Where the bytes of an accessible file (or of one of its thumbnails) come from: a signed
 * storage URL, or this replica.
 */
export async function downloadTarget(deps: UploadsDeps, row: AttachmentRow, thumbnail?: ThumbnailFormat): Promise<StreamTarget> {
  const key = thumbnail ? thumbnailKey(row.path_id, thumbnail.name) : row.path_id;
  const headers = thumbnail ? servedHeaders(`image/${thumbnail.format}`, thumbnail.name) : servedHeaders(row.content_type, row.file_name);
  const signed = await deps.storage.signedDownloadUrl(key, {
    ttlSeconds: deps.settings.storage.kind === 's3' ? deps.settings.storage.signedUrlTtlSeconds : 60,
    contentType: headers['content-type'],
    contentDisposition: headers['content-disposition'],
  });
  if (signed) return { kind: 'redirect', url: signed };
  const token = signToken(deps.keys.download, thumbnail ? { a: row.id, f: thumbnail.name } : { a: row.id }, INTERNAL_DOWNLOAD_TTL, deps.now());
  return { kind: 'stream', url: `${deps.internalUrl}/v1/file?token=${encodeURIComponent(token)}` };
}

/**
 * GET /user_uploads/thumbnail/{realm_id}/{path}/{format}: the file's own access rule first,
 * then one of the thumbnails made of it; a file that is no thumbnailed image, or a format not
 * made of it (an animated one of a still image), is "not found".
 */
export async function openThumbnail(deps: UploadsDeps, actor: Actor, realmId: number, pathId: string, formatName: string): Promise<StreamTarget> {
  const row = await accessFile(deps, actor, realmId, pathId);
  const [image] = await deps.store.findImagesByPathIds(deps.pool, row.realm_id, [row.path_id]);
  const format = THUMBNAIL_FORMATS.find((f) => f.name === formatName);
  if (!image || !format || !image.thumbnail_formats.includes(format.name)) throw fileNotFound();
  return downloadTarget(deps, row, format);
}

/** The realm's thumbnailed images among these path ids (message rendering). */
export async function listUploadedImages(deps: UploadsDeps, realmId: number, pathIds: readonly string[]): Promise<{ images: UploadedImage[] }> {
  const rows = await deps.store.findImagesByPathIds(deps.pool, realmId, pathIds);
  return {
    images: rows.map((r) => ({ path_id: r.path_id, original_width: r.original_width, original_height: r.original_height, animated: r.frames > 1 })),
  };
}

/** GET /api/v1/user_uploads/{realm_id}/{path}: a URL anyone holding it may use for a minute. */
export async function getTemporaryUrl(deps: UploadsDeps, actor: Actor, realmId: number, pathId: string): Promise<string> {
  const row = await accessFile(deps, actor, realmId, pathId);
  const token = signToken(deps.keys.temporary, { a: row.id }, TEMPORARY_URL_TTL, deps.now());
  return `/user_uploads/temporary/${token}/${encodeURIComponent(row.file_name)}`;
}

/** GET /user_uploads/temporary/{token}/{filename}: the token is the permission, the file must still exist. */
export async function openTemporary(deps: UploadsDeps, token: string): Promise<StreamTarget> {
  const claims = verifyToken(deps.keys.temporary, token, deps.now());
  if (!claims || typeof claims.a !== 'number') throw invalidToken();
  const row = await deps.store.findById(deps.pool, claims.a);
  if (!row) throw fileNotFound();
  return downloadTarget(deps, row);
}

/** Names and keys of uploaded files, as Zulip forms them (zerver/lib/upload). Pure. */
import { randomBytes } from 'node:crypto';

/** Longest stored name in bytes: object keys and file names stay well inside common limits. */
const MAX_NAME_BYTES = 200;

/**
 * Zulip's sanitize_name: NFKC, keep only letters, digits, `_`, whitespace, `.` and `-`, runs of
 * `-` and whitespace become one `-`. What is left can never name a directory (`/`, `\` and
 * `..` as a whole are gone), so it is safe in a path, an object key and a URL.
 */
export function sanitizeFileName(raw: string): string {
  let value = raw.normalize('NFKC').replace(/[^\p{L}\p{N}\p{M}_\s.-]/gu, '').trim();
  value = value.replace(/[-\s]+/g, '-');
  if (Buffer.byteLength(value) > MAX_NAME_BYTES) {
    // Keep the extension: it decides how the file is shown.
    const dot = value.lastIndexOf('.');
    const ext = dot > 0 && value.length - dot <= 16 ? value.slice(dot) : '';
    let stem = value.slice(0, value.length - ext.length);
    while (Buffer.byteLength(stem + ext) > MAX_NAME_BYTES) stem = [...stem].slice(0, -1).join('');
    value = stem + ext;
  }
  if (value === '' || value === '.' || value === '..') return 'uploaded-file';
  return value;
}

/** A new message upload's path id: `<realm_id>/<2 hex>/<24 random url-safe>/<sanitised name>`. */
export function newPathId(realmId: number, sanitisedName: string): string {
  return [String(realmId), randomBytes(1).toString('hex'), randomBytes(18).toString('base64url'), sanitisedName].join('/');
}

/**
 * The key prefixes every stored file of a realm is under: its uploads (newPathId), their
 * thumbnails (thumbnailKey in thumbnail-image.ts) and its custom emoji images (emojiFiles in
 * emoji-names.ts). Realm deletion removes everything under them.
 */
export function realmStoragePrefixes(realmId: number): string[] {
  return [String(realmId), `thumbnail/${realmId}`, `avatars/${realmId}`];
}

/**
 * Whether a download path (after /user_uploads/) has the shape of a path id: four segments,
 * none empty, `.` or `..`. Anything else is answered "not found" without a lookup.
 */
export function isPathIdShaped(pathId: string): boolean {
  const parts = pathId.split('/');
  return parts.length === 4 && parts.every((p) => p !== '' && p !== '.' && p !== '..' && !p.includes('\\') && !p.includes('\0'));
}

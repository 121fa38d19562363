/**
 * Receiving a file: the early checks made on the declared length before any byte is read,
 * then storing the stream and recording the attachment (with its `attachment` add event) in
 * one transaction. A file that fails any check after it was stored is removed again, so a
 * refused upload leaves neither a row nor an object.
 */
import type { Readable } from 'node:stream';
import type { Actor, StreamTarget } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import type { UploadsDeps } from '../deps.js';
import { toApiAttachment } from '../lib/attachment-view.js';
import { contentTypeOf } from '../lib/content-headers.js';
import { fileTooLarge, quotaExceeded } from '../lib/errors.js';
import { newPathId, sanitizeFileName } from '../lib/file-names.js';
import { signToken } from '../lib/tokens.js';
import type { AttachmentRow } from '../store/attachment-store.js';
import { notifyOwner } from './notify.js';

/** Room for the multipart framing and a few small fields around the file itself. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** Seconds an upload grant stays valid before its body starts. */
const UPLOAD_GRANT_TTL = 60;

export const maxUploadBytes = (deps: UploadsDeps) => deps.settings.maxFileUploadSizeMib * 1024 * 1024;

async function assertWithinQuota(deps: UploadsDeps, realmId: number, size: number, q: Queryable = deps.pool): Promise<void> {
  const quotaMib = deps.settings.realmQuotaMib;
  if (quotaMib === null) return;
  const used = await deps.store.spaceUsed(q, realmId);
  if (used + size > quotaMib * 1024 * 1024) throw quotaExceeded();
}

/** POST /user_uploads before the body: refuses what the declared length already rules out. */
export async function checkBeginUpload(deps: UploadsDeps, actor: Actor, contentLength: number | null): Promise<StreamTarget> {
  if (contentLength !== null) {
    if (contentLength > maxUploadBytes(deps) + MULTIPART_OVERHEAD_BYTES) throw fileTooLarge(deps.settings.maxFileUploadSizeMib);
    await assertWithinQuota(deps, actor.realm_id, Math.max(0, contentLength - MULTIPART_OVERHEAD_BYTES));
  }
  const token = signToken(deps.keys.upload, { r: actor.realm_id, u: actor.user_id }, UPLOAD_GRANT_TTL, deps.now());
  return { kind: 'stream', url: `${deps.internalUrl}/v1/upload?token=${encodeURIComponent(token)}` };
}

export interface IncomingFile {
  /** The name the client gave (unsanitised). */
  name: string;
  declaredType: string | undefined;
  /** The file's bytes; the caller destroys it to abort (size limit, client gone). */
  body: Readable;
  /** Bytes that went through `body` (final once it ended). */
  bytesRead(): number;
}

/**
 * Stores the file, waits for the rest of the request to turn out well (`requestDone`: no
 * second file, no broken framing), and records it. On any failure nothing remains.
 */
export async function doStoreUpload(deps: UploadsDeps, owner: { realm_id: number; user_id: number }, file: IncomingFile, requestDone: Promise<void>): Promise<AttachmentRow> {
  const name = sanitizeFileName(file.name);
  const contentType = contentTypeOf(file.declaredType, name);
  const pathId = newPathId(owner.realm_id, name);
  await deps.storage.write(pathId, file.body, contentType);
  try {
    await requestDone;
    return await transaction(deps.pool, async (tx) => {
      await deps.store.lockRealm(tx, owner.realm_id);
      const size = file.bytesRead();
      await assertWithinQuota(deps, owner.realm_id, size, tx);
      const row = await deps.store.insert(tx, { realm_id: owner.realm_id, owner_id: owner.user_id, path_id: pathId, file_name: name, content_type: contentType, size });
      const used = await deps.store.spaceUsed(tx, owner.realm_id);
      await notifyOwner(tx, owner.realm_id, owner.user_id, { op: 'add', attachment: toApiAttachment(row, []), upload_space_used: used });
      return row;
    });
  } catch (e) {
    await deps.storage.remove(pathId).catch((err) => deps.log.warn({ err, path_id: pathId }, 'could not remove a refused upload'));
    throw e;
  }
}

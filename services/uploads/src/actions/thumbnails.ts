/**
 * Thumbnails of an uploaded image, made when its upload is stored and before the upload is
 * answered, so the message that links it a moment later renders with its preview (Zulip makes
 * them in a worker and re-renders the message when they are ready; doing it here keeps sending
 * free of image work and of a second rendering). A replica makes a few at a time
 * (deps.thumbnailSlots): each holds the whole file (at most the upload limit) in memory.
 *
 * An upload that is not an image we can thumbnail within the pixel and time limits stays a
 * plain file, without an inline preview, and its upload still succeeds, as in Zulip.
 */
import { Readable } from 'node:stream';
import { THUMBNAIL_FORMATS } from '@zc/shared/contracts';
import type { UploadsDeps } from '../deps.js';
import { readWhole } from '../lib/read-whole.js';
import { makeThumbnails, NotThumbnailable, THUMBNAILED_CONTENT_TYPES, thumbnailKey } from '../lib/thumbnail-image.js';
import type { AttachmentRow } from '../store/attachment-store.js';

/** Makes and records the thumbnails of a stored upload if it is an image; never throws. */
export async function doThumbnailUpload(deps: UploadsDeps, row: AttachmentRow): Promise<void> {
  if (!THUMBNAILED_CONTENT_TYPES.has(row.content_type)) return;
  const stored: string[] = [];
  try {
    await deps.thumbnailSlots.run(async () => {
      const object = await deps.storage.read(row.path_id);
      if (!object) return;
      const limits = { maxPixels: deps.settings.imageMaxPixels, timeoutSeconds: deps.settings.imageTimeoutSeconds };
      const made = await makeThumbnails(await readWhole(object.body), THUMBNAIL_FORMATS, limits);
      for (const { format, image } of made.outputs) {
        const key = thumbnailKey(row.path_id, format.name);
        stored.push(key);
        await deps.storage.write(key, Readable.from([image]), `image/${format.format}`);
      }
      await deps.store.insertImage(deps.pool, {
        attachment_id: row.id,
        original_width: made.width,
        original_height: made.height,
        frames: made.frames,
        thumbnail_formats: made.outputs.map((o) => o.format.name),
      });
    });
  } catch (err) {
    // Includes the attachment deleted meanwhile (the row's foreign key): its thumbnails go too.
    for (const key of stored) await deps.storage.remove(key).catch(() => undefined);
    if (err instanceof NotThumbnailable) deps.log.info({ path_id: row.path_id, reason: err.message }, 'upload not thumbnailed');
    else deps.log.warn({ err, path_id: row.path_id }, 'thumbnailing an upload failed');
  }
}

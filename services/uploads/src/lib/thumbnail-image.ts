/**
 * Thumbnails of uploaded images for inline previews, made as Zulip makes them
 * (zerver/lib/thumbnail.py): every format fits the image inside its max_width x max_height,
 * never enlarged, with EXIF orientation applied; animated formats are made only for images
 * with more than one frame (all frames kept), the still ones from the first frame.
 *
 * The bounds are those of emoji images (lib/emoji-image.ts): libvips only sees formats named
 * by their magic bytes, the declared pixels of every frame together are checked against the
 * limit from the header alone before anything is decoded (a decompression bomb costs a header
 * read), and each operation gives up after the timeout.
 */
import sharp, { type FormatEnum } from 'sharp';
import { THUMBNAIL_FORMATS, type ThumbnailFormat } from '@zc/shared/contracts';
import { sniffImageFormat, type ImageLimits } from './emoji-image.js';

/** Content types we try to thumbnail (Zulip looks at the self-reported type first, then the bytes). */
export const THUMBNAILED_CONTENT_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** Where one thumbnail of an upload is stored (never a user's path id: those start with a realm id). */
export const thumbnailKey = (pathId: string, formatName: string) => `thumbnail/${pathId}/${formatName}`;

/** Every thumbnail an upload may have, for removal with it. */
export const thumbnailKeys = (pathId: string) => THUMBNAIL_FORMATS.map((f) => thumbnailKey(pathId, f.name));

export interface Thumbnails {
  /** The original's size as shown (after EXIF rotation), one frame. */
  width: number;
  height: number;
  frames: number;
  outputs: Array<{ format: ThumbnailFormat; image: Buffer }>;
}

/** Why an upload gets no thumbnails; it stays a plain file (no inline preview), as in Zulip. */
export class NotThumbnailable extends Error {
  override readonly name = 'NotThumbnailable';
}

/** EXIF orientations 5 to 8 turn the image a quarter: width and height swap. */
const swapsSides = (orientation: number | undefined) => orientation !== undefined && orientation >= 5;

/** Makes `formats` of an image; throws NotThumbnailable for what is not an image within the limits. */
export async function makeThumbnails(data: Buffer, formats: readonly ThumbnailFormat[], limits: ImageLimits): Promise<Thumbnails> {
  const sniffed = sniffImageFormat(data);
  if (!sniffed) throw new NotThumbnailable('not a PNG, JPEG, GIF or WebP image');
  const open = (o: { animated?: boolean; pages?: number } = {}) =>
    sharp(data, { limitInputPixels: limits.maxPixels, failOn: 'error', ...o }).timeout({ seconds: limits.timeoutSeconds });
  try {
    // The header only: sizes and frame count, nothing decoded yet.
    const meta = await open({ animated: true }).metadata();
    if (meta.format !== sniffed || !meta.width || !meta.height) throw new NotThumbnailable('unreadable image header');
    if (meta.width * meta.height > limits.maxPixels) throw new NotThumbnailable(`${meta.width}x${meta.height} pixels (all frames) is over the limit`);
    const frames = meta.pages ?? 1;
    const frameHeight = meta.pageHeight ?? meta.height;
    const animated = frames > 1;
    const outputs: Thumbnails['outputs'] = [];
    for (const format of formats) {
      if (format.animated && !animated) continue;
      const box = { width: format.max_width, height: format.max_height, fit: 'inside' as const, withoutEnlargement: true };
      const pipeline = format.animated ? open({ animated: true }).resize(box) : open({ pages: 1 }).rotate().resize(box);
      outputs.push({ format, image: await pipeline.toFormat(format.format as keyof FormatEnum).toBuffer() });
    }
    const sideways = swapsSides(meta.orientation);
    return { width: sideways ? frameHeight : meta.width, height: sideways ? meta.width : frameHeight, frames, outputs };
  } catch (e) {
    if (e instanceof NotThumbnailable) throw e;
    throw new NotThumbnailable(e instanceof Error ? e.message : String(e));
  }
}

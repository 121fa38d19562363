/**
 * Emoji images, made as Zulip makes them (zerver/lib/thumbnail.py resize_emoji): a still image
 * becomes a 64x64 square cropped from its centre; an animated one keeps its animation, fitted
 * into 64x64, with a still 64x64 PNG of its first frame beside it.
 *
 * libvips (through sharp) decodes only formats named by their magic bytes here (PNG, JPEG,
 * GIF, WebP: never SVG or anything that could fetch or run), refuses images whose declared
 * pixels (every frame counted) exceed `maxPixels` before decoding them (decompression
 * bombs), and gives up after `timeoutSeconds`.
 */
import sharp from 'sharp';
import { isAppError } from '@zc/shared/errors';
import { imageTooLarge, notAnImage } from './errors.js';

// libvips' operation cache would keep decoded images around between uploads; memory matters more here.
sharp.cache(false);

/** Zulip's DEFAULT_EMOJI_SIZE. */
export const EMOJI_SIZE = 64;

export interface ImageLimits {
  /** Width x height, all frames together, above which an image is refused unread. */
  maxPixels: number;
  /** Seconds libvips may spend on one image. */
  timeoutSeconds: number;
}

type Format = 'png' | 'jpeg' | 'gif' | 'webp';

const EXTENSION: Record<Format, string> = { png: 'png', jpeg: 'jpg', gif: 'gif', webp: 'webp' };
const CONTENT_TYPE: Record<Format, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

export const contentTypeOfEmojiExtension = (ext: string): string => (ext === 'jpg' ? 'image/jpeg' : `image/${ext}`);

/** The format the first bytes announce, among those we accept. */
export function sniffImageFormat(data: Buffer): Format | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpeg';
  if (data.length >= 6 && /^GIF8[79]a$/.test(data.subarray(0, 6).toString('latin1'))) return 'gif';
  if (data.length >= 12 && data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  return undefined;
}

export interface EmojiImage {
  /** File extension of `image` (the source's format). */
  ext: string;
  contentType: string;
  image: Buffer;
  /** First frame as PNG, for animated emoji only. */
  still: Buffer | undefined;
}

function refusal(e: unknown): Error {
  const message = e instanceof Error ? e.message : '';
  if (/pixel limit|too large|timeout/i.test(message)) return imageTooLarge();
  return notAnImage();
}

const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

/** Makes the stored images of an uploaded emoji; throws Zulip's errors for what is not a usable image. */
export async function resizeEmoji(data: Buffer, limits: ImageLimits): Promise<EmojiImage> {
  const format = sniffImageFormat(data);
  if (!format) throw notAnImage();
  const open = (o: { animated?: boolean; pages?: number } = {}) =>
    sharp(data, { limitInputPixels: limits.maxPixels, failOn: 'error', ...o }).timeout({ seconds: limits.timeoutSeconds });
  try {
    const meta = await open({ animated: true }).metadata();
    if (meta.format !== format) throw notAnImage();
    const animated = (meta.pages ?? 1) > 1 && (format === 'gif' || format === 'webp');
    const square = { width: EMOJI_SIZE, height: EMOJI_SIZE };
    if (!animated) {
      // EXIF orientation applies before the crop, as it would when shown.
      const image = await open().rotate().resize({ ...square, fit: 'cover', position: 'centre' }).toFormat(format).toBuffer();
      return { ext: EXTENSION[format], contentType: CONTENT_TYPE[format], image, still: undefined };
    }
    const [image, still] = await Promise.all([
      open({ animated: true }).resize({ ...square, fit: 'contain', background: TRANSPARENT }).toFormat(format).toBuffer(),
      open({ pages: 1 }).resize({ ...square, fit: 'cover', position: 'centre' }).png().toBuffer(),
    ]);
    return { ext: EXTENSION[format], contentType: CONTENT_TYPE[format], image, still };
  } catch (e) {
    if (isAppError(e)) throw e;
    throw refusal(e);
  }
}

/** Helpers for the custom emoji tests: images made on the spot, and the emoji endpoints. */
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { Account, System } from '../harness.js';
import { multipart, raw, type FilePart, type RawResponse } from './uploads-support.js';

/** A still PNG of this size, one colour. */
export function png(width: number, height: number, colour = { r: 200, g: 30, b: 30 }): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { ...colour, alpha: 1 } } }).png().toBuffer();
}

/** An animated GIF of `frames` frames of this size. */
export async function animatedGif(width: number, height: number, frames = 3): Promise<Buffer> {
  const pages = await Promise.all(Array.from({ length: frames }, (_, i) => png(width, height, { r: (i * 80) % 256, g: 100, b: 50 })));
  return sharp(pages, { join: { animated: true } }).gif({ delay: pages.map(() => 100) }).toBuffer();
}

/**
 * A decompression bomb: a valid PNG of a few dozen bytes whose header declares
 * `width` x `height` pixels (decoding it would need width * height * 3 bytes).
 */
export function pngDeclaring(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // RGB
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', zlib.deflateSync(Buffer.alloc(1024))), chunk('IEND', Buffer.alloc(0))]);
}

/** POST /api/v1/realm/emoji/{name} with these files (by default one, as python-zulip-api sends it). */
export function postEmoji(sys: System, as: Account, name: string, files: FilePart[], o: { host?: string } = {}): Promise<RawResponse> {
  const { body, contentType } = multipart(files);
  return raw(sys, 'POST', `/api/v1/realm/emoji/${encodeURIComponent(name)}`, { as, body, headers: { 'content-type': contentType }, ...o });
}

export const imageFile = (data: Buffer, filename = 'emoji.png'): FilePart => ({ field: filename, filename, contentType: 'image/png', data });

/** Helpers for the custom emoji tests: images made on the spot, and the emoji endpoints. */
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

/** POST /api/v1/realm/emoji/{name} with these files (by default one, as python-zulip-api sends it). */
export function postEmoji(sys: System, as: Account, name: string, files: FilePart[]): Promise<RawResponse> {
  const { body, contentType } = multipart(files);
  return raw(sys, 'POST', `/api/v1/realm/emoji/${encodeURIComponent(name)}`, { as, body, headers: { 'content-type': contentType } });
}

export const imageFile = (data: Buffer, filename = 'emoji.png'): FilePart => ({ field: filename, filename, contentType: 'image/png', data });

/**
 * The internal listener's emoji endpoints: POST /v1/emoji receives an emoji image (read whole:
 * it is at most MAX_EMOJI_FILE_SIZE_MIB, and the image library needs all of it), GET
 * /v1/emoji-image streams a stored emoji image. Both take a token an uploads NATS answer signed.
 */
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { doAddRealmEmoji, maxEmojiBytes } from '../actions/realm-emoji.js';
import { MULTIPART_OVERHEAD_BYTES } from '../actions/uploads.js';
import type { UploadsDeps } from '../deps.js';
import { exactlyOneFile, fileNotFound, fileTooLarge, invalidToken } from '../lib/errors.js';
import { verifyToken } from '../lib/tokens.js';
import { readWhole } from '../lib/read-whole.js';
import { receiveOneFile } from './multipart-file.js';

export async function receiveEmoji(deps: UploadsDeps, req: http.IncomingMessage, token: string): Promise<Record<string, never>> {
  const claims = verifyToken(deps.keys.emojiUpload, token, deps.now());
  if (!claims || typeof claims.r !== 'number' || typeof claims.u !== 'number' || typeof claims.n !== 'string') throw invalidToken();
  const author = { realm_id: claims.r, user_id: claims.u };
  const name = claims.n;
  const tooLarge = () => fileTooLarge(deps.settings.maxEmojiFileSizeMib);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxEmojiBytes(deps) + MULTIPART_OVERHEAD_BYTES) throw tooLarge();
  const rules = { maxBytes: maxEmojiBytes(deps), tooLarge, noFile: exactlyOneFile, tooMany: exactlyOneFile };
  await receiveOneFile(req, rules, async (file, requestDone) => {
    const data = await readWhole(file.body);
    await requestDone;
    return doAddRealmEmoji(deps, author, name, data);
  });
  return {};
}

/** Emoji images never change under one URL (a new image gets a new id), so caches may keep them. */
const IMAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cache-control': 'public, max-age=86400',
} as const;

export async function sendEmojiImage(deps: UploadsDeps, res: http.ServerResponse, token: string): Promise<void> {
  const claims = verifyToken(deps.keys.emojiImage, token, deps.now());
  if (!claims || typeof claims.k !== 'string' || typeof claims.t !== 'string') throw invalidToken();
  const object = await deps.storage.read(claims.k);
  if (!object) throw fileNotFound();
  res.writeHead(200, { ...IMAGE_HEADERS, 'content-type': claims.t, 'content-disposition': 'inline', 'content-length': String(object.size) });
  await pipeline(object.body, res);
}

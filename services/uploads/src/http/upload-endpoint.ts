/**
 * POST /v1/upload on the internal listener: the gateway streams the client's multipart body
 * here unchanged. The file part goes straight to storage as it arrives (memory stays at a
 * few buffers whatever the size); the size limit cuts it off at the first byte too many.
 */
import type http from 'node:http';
import { doThumbnailUpload } from '../actions/thumbnails.js';
import { doStoreUpload, maxUploadBytes, MULTIPART_OVERHEAD_BYTES } from '../actions/uploads.js';
import type { UploadsDeps } from '../deps.js';
import { fileTooLarge, invalidToken, noFileGiven, tooManyFiles } from '../lib/errors.js';
import { verifyToken } from '../lib/tokens.js';
import { receiveOneFile } from './multipart-file.js';

export interface UploadAnswer {
  uri: string;
  url: string;
  filename: string;
}

/** Reads the request and stores its one file; throws AppErrors for every refusal. */
export async function receiveUpload(deps: UploadsDeps, req: http.IncomingMessage, token: string): Promise<UploadAnswer> {
  const claims = verifyToken(deps.keys.upload, token, deps.now());
  if (!claims || typeof claims.r !== 'number' || typeof claims.u !== 'number') throw invalidToken();
  const owner = { realm_id: claims.r, user_id: claims.u };
  const max = maxUploadBytes(deps);
  const tooLarge = () => fileTooLarge(deps.settings.maxFileUploadSizeMib);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max + MULTIPART_OVERHEAD_BYTES) throw tooLarge();
  const rules = { maxBytes: max, tooLarge, noFile: noFileGiven, tooMany: tooManyFiles };
  const row = await receiveOneFile(req, rules, (file, requestDone) => doStoreUpload(deps, owner, file, requestDone));
  // Before answering, so a message linking the image a moment later renders its preview.
  await doThumbnailUpload(deps, row);
  const uri = `/user_uploads/${row.path_id}`;
  return { uri, url: uri, filename: row.file_name };
}

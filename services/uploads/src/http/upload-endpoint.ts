/**
 * POST /v1/upload on the internal listener: the gateway streams the client's multipart body
 * here unchanged. The file part goes straight to storage as it arrives (memory stays at a
 * few buffers whatever the size); the size limit cuts it off at the first byte too many.
 */
import type http from 'node:http';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import { badRequest } from '@zc/shared/errors';
import { doStoreUpload, maxUploadBytes, MULTIPART_OVERHEAD_BYTES } from '../actions/uploads.js';
import type { UploadsDeps } from '../deps.js';
import { fileTooLarge, invalidToken, noFileGiven, tooManyFiles, uploadIncomplete } from '../lib/errors.js';
import { verifyToken } from '../lib/tokens.js';

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
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max + MULTIPART_OVERHEAD_BYTES) throw fileTooLarge(deps.settings.maxFileUploadSizeMib);
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) throw noFileGiven();

  let busboy: BusboyInstance;
  try {
    busboy = Busboy({
      headers: { ...req.headers, 'content-type': contentType },
      limits: { files: 1, fileSize: max, fields: 64, fieldSize: 1024 * 1024, parts: 100, headerPairs: 100 },
    });
  } catch {
    throw badRequest('Malformed multipart body');
  }

  return new Promise<UploadAnswer>((resolve, reject) => {
    let file: BusboyFileStream | undefined;
    let stored: Promise<unknown> | undefined;
    let failure: Error | undefined;
    let settleRequest!: (e?: Error) => void;
    const requestDone = new Promise<void>((ok, ko) => {
      settleRequest = (e) => (e ? ko(e) : ok());
    });
    requestDone.catch(() => undefined);

    const fail = (e: Error) => {
      if (failure) return;
      failure = e;
      settleRequest(e);
      req.unpipe(busboy);
      if (file && !file.destroyed && !file.readableEnded) file.destroy(e);
      // Nothing more of this body is wanted; the stored part (if any) is removed by doStoreUpload.
      (stored ?? Promise.resolve()).then(
        () => reject(e),
        () => reject(e),
      );
    };

    busboy.on('file', (_field, stream, filename, _encoding, mimeType) => {
      if (file) {
        stream.resume();
        return fail(tooManyFiles());
      }
      file = stream;
      // Storage reports the stream's failures; this keeps a late destroy from going uncaught.
      stream.on('error', () => undefined);
      stream.on('limit', () => fail(fileTooLarge(deps.settings.maxFileUploadSizeMib)));
      const f = stream;
      stored = doStoreUpload(deps, owner, { name: filename, declaredType: mimeType, body: stream, bytesRead: () => f.bytesRead }, requestDone).then(
        (row) => {
          const uri = `/user_uploads/${row.path_id}`;
          resolve({ uri, url: uri, filename: row.file_name });
        },
        (e: unknown) => {
          if (!failure) fail(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
    busboy.on('filesLimit', () => fail(tooManyFiles()));
    busboy.on('partsLimit', () => fail(badRequest('Too many parts in the upload')));
    busboy.on('fieldsLimit', () => fail(badRequest('Too many fields in the upload')));
    busboy.on('error', () => fail(uploadIncomplete()));
    busboy.on('finish', () => {
      if (failure) return;
      if (!file) return fail(noFileGiven());
      settleRequest();
    });
    req.on('aborted', () => fail(uploadIncomplete()));
    req.on('error', () => fail(uploadIncomplete()));
    req.pipe(busboy);
  });
}

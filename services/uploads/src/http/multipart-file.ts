/**
 * Reading the one file of a multipart body as it streams in (busboy), for every upload the
 * internal listener takes. The size limit cuts the file off at the first byte too many, a
 * second file or a body that ends early is refused; the consumer's work (storing the bytes)
 * is awaited before a refusal is answered, so it can clean up and nothing half-written stays.
 */
import type http from 'node:http';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import { badRequest } from '@zc/shared/errors';
import type { IncomingFile } from '../actions/uploads.js';
import { uploadIncomplete } from '../lib/errors.js';

export interface OneFileRules {
  maxBytes: number;
  tooLarge: () => Error;
  noFile: () => Error;
  tooMany: () => Error;
}

/**
 * Hands the body's one file to `consume` as it arrives, with `requestDone`, which settles once
 * the rest of the body turned out well (or not); answers what `consume` answers, or the refusal.
 */
export function receiveOneFile<T>(req: http.IncomingMessage, rules: OneFileRules, consume: (file: IncomingFile, requestDone: Promise<void>) => Promise<T>): Promise<T> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\b/i.test(contentType)) return Promise.reject(rules.noFile());
  let busboy: BusboyInstance;
  try {
    busboy = Busboy({
      headers: { ...req.headers, 'content-type': contentType },
      limits: { files: 1, fileSize: rules.maxBytes, fields: 64, fieldSize: 1024 * 1024, parts: 100, headerPairs: 100 },
    });
  } catch {
    return Promise.reject(badRequest('Malformed multipart body'));
  }

  return new Promise<T>((resolve, reject) => {
    let file: BusboyFileStream | undefined;
    let consumed: Promise<unknown> | undefined;
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
      // Nothing more of this body is wanted; the consumer removes what it stored.
      (consumed ?? Promise.resolve()).then(
        () => reject(e),
        () => reject(e),
      );
    };

    busboy.on('file', (_field, stream, filename, _encoding, mimeType) => {
      if (file) {
        stream.resume();
        return fail(rules.tooMany());
      }
      file = stream;
      // The consumer reports the stream's failures; this keeps a late destroy from going uncaught.
      stream.on('error', () => undefined);
      stream.on('limit', () => fail(rules.tooLarge()));
      const f = stream;
      consumed = consume({ name: filename, declaredType: mimeType, body: stream, bytesRead: () => f.bytesRead }, requestDone).then(resolve, (e: unknown) => {
        if (!failure) fail(e instanceof Error ? e : new Error(String(e)));
      });
    });
    busboy.on('filesLimit', () => fail(rules.tooMany()));
    busboy.on('partsLimit', () => fail(badRequest('Too many parts in the upload')));
    busboy.on('fieldsLimit', () => fail(badRequest('Too many fields in the upload')));
    busboy.on('error', () => fail(uploadIncomplete()));
    busboy.on('finish', () => {
      if (failure) return;
      if (!file) return fail(rules.noFile());
      settleRequest();
    });
    req.on('aborted', () => fail(uploadIncomplete()));
    req.on('error', () => fail(uploadIncomplete()));
    req.pipe(busboy);
  });
}

/** GET /v1/file on the internal listener: streams one stored file with its safe headers. */
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { UploadsDeps } from '../deps.js';
import { servedHeaders } from '../lib/content-headers.js';
import { fileNotFound, invalidToken } from '../lib/errors.js';
import { verifyToken } from '../lib/tokens.js';

export async function sendFile(deps: UploadsDeps, res: http.ServerResponse, token: string): Promise<void> {
  const claims = verifyToken(deps.keys.download, token, deps.now());
  if (!claims || typeof claims.a !== 'number') throw invalidToken();
  const row = await deps.store.findById(deps.pool, claims.a);
  if (!row) throw fileNotFound();
  const object = await deps.storage.read(row.path_id);
  if (!object) throw fileNotFound();
  res.writeHead(200, { ...servedHeaders(row.content_type, row.file_name), 'content-length': String(object.size) });
  await pipeline(object.body, res);
}

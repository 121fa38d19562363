/** GET /v1/file on the internal listener: streams one stored file (or one of its thumbnails) with its safe headers. */
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { THUMBNAIL_FORMATS } from '@zc/shared/contracts';
import type { UploadsDeps } from '../deps.js';
import { servedHeaders } from '../lib/content-headers.js';
import { fileNotFound, invalidToken } from '../lib/errors.js';
import { thumbnailKey } from '../lib/thumbnail-image.js';
import { verifyToken } from '../lib/tokens.js';

export async function sendFile(deps: UploadsDeps, res: http.ServerResponse, token: string): Promise<void> {
  const claims = verifyToken(deps.keys.download, token, deps.now());
  if (!claims || typeof claims.a !== 'number') throw invalidToken();
  const row = await deps.store.findById(deps.pool, claims.a);
  if (!row) throw fileNotFound();
  // A thumbnail's token names its format (queries/attachments.ts checked it was made).
  const thumbnail = typeof claims.f === 'string' ? THUMBNAIL_FORMATS.find((f) => f.name === claims.f) : undefined;
  if (claims.f !== undefined && !thumbnail) throw invalidToken();
  const object = await deps.storage.read(thumbnail ? thumbnailKey(row.path_id, thumbnail.name) : row.path_id);
  if (!object) throw fileNotFound();
  const headers = thumbnail ? servedHeaders(`image/${thumbnail.format}`, thumbnail.name) : servedHeaders(row.content_type, row.file_name);
  res.writeHead(200, { ...headers, 'content-length': String(object.size) });
  await pipeline(object.body, res);
}

/**
 * The uploads service's internal HTTP listener: the only way file bytes move between the
 * gateway and this service (never NATS). Every request carries a token a NATS answer of this
 * service signed, so the listener needs no other authentication; keep it off the public
 * network all the same (Kubernetes: a ClusterIP port the gateway alone reaches).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorBody, success } from '@zc/shared/envelope';
import { internalError, isAppError } from '@zc/shared/errors';
import type { UploadsDeps } from '../deps.js';
import { sendFile } from './download-endpoint.js';
import { receiveEmoji, sendEmojiImage } from './emoji-endpoints.js';
import { receiveUpload } from './upload-endpoint.js';

export interface InternalServer {
  url: string;
  close(): Promise<void>;
}

function answerError(deps: UploadsDeps, res: http.ServerResponse, e: unknown): void {
  const err = isAppError(e) ? e : internalError(e);
  if (!isAppError(e)) deps.log.error({ err: e }, 'internal upload endpoint failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // The rest of a refused body is not read: the connection closes after the answer.
  res.writeHead(err.httpStatus, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(errorBody(err)));
}

export async function startInternalServer(deps: UploadsDeps, port: number, host: string, advertiseUrl?: string): Promise<InternalServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://internal');
    const token = url.searchParams.get('token') ?? '';
    if (req.method === 'POST' && url.pathname === '/v1/upload') {
      receiveUpload(deps, req, token).then(
        (answer) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(success({ ...answer }))),
        (e: unknown) => answerError(deps, res, e),
      );
    } else if (req.method === 'GET' && url.pathname === '/v1/file') {
      sendFile(deps, res, token).catch((e: unknown) => answerError(deps, res, e));
    } else if (req.method === 'POST' && url.pathname === '/v1/emoji') {
      receiveEmoji(deps, req, token).then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(success({}))),
        (e: unknown) => answerError(deps, res, e),
      );
    } else if (req.method === 'GET' && url.pathname === '/v1/emoji-image') {
      sendEmojiImage(deps, res, token).catch((e: unknown) => answerError(deps, res, e));
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"result":"error","msg":"Not found","code":"BAD_REQUEST"}');
    }
  });
  // Uploads may be slow; a stalled one still ends.
  server.requestTimeout = 10 * 60_000;
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = server.address() as AddressInfo;
  const shownHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return {
    url: advertiseUrl ?? `http://${shownHost === '0.0.0.0' ? '127.0.0.1' : shownHost}:${bound.port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }),
  };
}

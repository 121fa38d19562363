/**
 * Moving file bytes between the client and an uploads replica's internal listener (the
 * address and token come from a NATS answer). Bodies are piped, never buffered, so memory
 * stays flat whatever the file size; only the small JSON answers are read whole.
 */
import http from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { StreamTarget } from '@zc/shared/contracts';
import { serviceUnavailable } from '@zc/shared/errors';
import { drainsWhenRefused } from '../plugins/params.js';

/** Headers of a served file passed on to the client. */
const FILE_HEADERS = ['content-type', 'content-length', 'content-disposition', 'x-content-type-options', 'content-security-policy', 'cache-control'];
/** Largest JSON answer read from the internal listener. */
const MAX_ANSWER_BYTES = 64 * 1024;

function readJson(res: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_ANSWER_BYTES) res.destroy(new Error('answer too large'));
      else chunks.push(c);
    });
    res.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (e) {
        reject(e);
      }
    });
    res.on('error', reject);
  });
}

/**
 * In this route context only: multipart bodies are left unread for the route to stream. For an
 * answer given before the body was read (a refusal: the file is over the limit), the rest of a
 * body declared up to REFUSED_BODY_DRAIN_LIMIT is read and dropped, keeping the connection, as
 * for any refused multipart body (plugins/params.ts): a client that sends the whole file before
 * reading its answer then gets the refusal rather than a reset. A longer one, or one of unknown
 * length, closes the connection instead.
 */
export function leaveMultipartUnread(app: FastifyInstance): void {
  // Marked so the parameter layer's multipart size check (plugins/params.ts) lets them through.
  app.addHook('onRoute', (route) => {
    route.config = { ...(route.config ?? {}), streamsMultipart: true };
  });
  app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null, undefined));
  app.addHook('onSend', async (request, reply) => {
    const raw = request.raw;
    if (raw.complete) return;
    if (!drainsWhenRefused(raw.headers['content-length'])) return void reply.header('connection', 'close');
    // Nothing reads the body any more (the route unpiped it, or never piped it): drop it.
    raw.unpipe();
    raw.resume();
  });
}

/**
 * Pipes the request body to `url` and answers with what the uploads replica answers. If it
 * answers before the body ended (a refusal), the rest is not read (the route closes the connection).
 */
export function forwardUpload(request: FastifyRequest, reply: FastifyReply, url: string): Promise<unknown> {
  const raw = request.raw;
  return new Promise((resolve, reject) => {
    const length = raw.headers['content-length'];
    const upstream = http.request(url, {
      method: 'POST',
      headers: {
        'content-type': raw.headers['content-type'] ?? '',
        ...(length !== undefined ? { 'content-length': length } : { 'transfer-encoding': 'chunked' }),
      },
    });
    let answered = false;
    upstream.on('response', (res) => {
      answered = true;
      readJson(res).then(
        (body) => {
          if (!raw.complete) raw.unpipe(upstream);
          reply.code(res.statusCode ?? 502).type('application/json');
          resolve(body);
        },
        () => reject(serviceUnavailable()),
      );
    });
    upstream.on('error', () => {
      if (!answered) reject(serviceUnavailable());
    });
    // A client that goes away mid-body takes the upstream request with it: the replica
    // sees the upload end early and keeps nothing.
    raw.on('close', () => {
      if (!raw.complete && !answered) upstream.destroy();
    });
    raw.pipe(upstream);
  });
}

/** Streams a file from `url` to the client with its headers; a JSON error answer is passed on as it is. */
export async function forwardDownload(reply: FastifyReply, url: string): Promise<unknown> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.get(url, resolve).on('error', () => reject(serviceUnavailable()));
  });
  if (res.statusCode !== 200) {
    const body = await readJson(res).catch(() => {
      throw serviceUnavailable();
    });
    reply.code(res.statusCode ?? 502).type('application/json');
    return body;
  }
  for (const h of FILE_HEADERS) {
    const v = res.headers[h];
    if (v !== undefined) reply.header(h, v);
  }
  return reply.send(res);
}

/** Answers with a stored file: a redirect to a signed storage URL, or its bytes streamed from an uploads replica. */
export async function serveFileTarget(reply: FastifyReply, target: StreamTarget): Promise<unknown> {
  if (target.kind === 'redirect') return reply.redirect(target.url, 302);
  return forwardDownload(reply, target.url);
}

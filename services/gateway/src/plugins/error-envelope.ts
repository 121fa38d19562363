/**
 * The one error handler: AppError as it is, Fastify's own errors (body too large, bad
 * content type, malformed body) in the envelope with their status, anything else a 500
 * with no detail. Unknown endpoints answer 404 in the envelope.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { errorBody } from '@zc/shared/envelope';
import { AppError, asOutage, internalError, isAppError } from '@zc/shared/errors';

function fromFastifyError(e: FastifyError): AppError | undefined {
  const status = e.statusCode ?? 500;
  if (status >= 500) return undefined;
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', 413);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('BAD_REQUEST', 'Unsupported content type', 415);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('BAD_REQUEST', 'Malformed JSON', 400);
    default:
      return new AppError('BAD_REQUEST', 'Bad request', status);
  }
}

/** Fastify's `frameworkErrors`: a URL the router cannot take (bad percent-escape, segment too long). */
export function answerFrameworkError(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const e = err.code === 'FST_ERR_MAX_PARAM_LENGTH'
    ? new AppError('BAD_REQUEST', 'URL path segment too long', 414)
    : new AppError('BAD_REQUEST', 'Malformed URL', 400);
  void reply.code(e.httpStatus).send(errorBody(e));
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the request (headers or URL over
 * its size limit, malformed request line, timeout); no request object exists, so the answer
 * is written to the socket as Node would, in our envelope.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, e] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', new AppError('BAD_REQUEST', 'Request header fields too large', 431)]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', new AppError('BAD_REQUEST', 'Request timeout', 408)]
        : [400, 'Bad Request', new AppError('BAD_REQUEST', 'Bad request', 400)];
  const body = JSON.stringify(errorBody(e));
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\n\r\n${body}`);
  }
  socket.destroy(err);
}

/**
 * busboy's complaints about a broken multipart body (no boundary, cut short, bad part
 * header) are plain Errors with no status; they are the client's fault, not ours.
 */
const MALFORMED_MULTIPART = /^(Multipart: |Unexpected end of (multipart data|form)|Malformed part header)/;

export default fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((err: FastifyError, request, reply) => {
      let e: AppError;
      if (isAppError(err)) e = err;
      else if (err instanceof SyntaxError) e = new AppError('BAD_REQUEST', 'Malformed request body', 400);
      else if (!err.statusCode && MALFORMED_MULTIPART.test(err.message)) e = new AppError('BAD_REQUEST', 'Malformed multipart body', 400);
      else e = fromFastifyError(err) ?? asOutage(err) ?? internalError(err);
      if (e.httpStatus >= 500) request.log.error({ err, code: e.code, req_id: request.id }, 'request failed');
      else request.log.info({ code: e.code, status: e.httpStatus, req_id: request.id }, 'request rejected');
      if (e.httpStatus === 401) reply.header('www-authenticate', 'Basic realm="zulip"');
      const retryAfter = e.data['retry-after'];
      if (e.httpStatus === 429 && typeof retryAfter === 'number') reply.header('retry-after', String(Math.ceil(retryAfter)));
      return reply.code(e.httpStatus).send(errorBody(e));
    });
    app.setNotFoundHandler((_request, reply) => reply.code(404).send({ result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' }));
  },
  { name: 'error-envelope' },
);

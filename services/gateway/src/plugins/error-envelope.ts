/**
 * The one error handler: AppError as it is, Fastify's own errors (body too large, bad
 * content type, malformed body) in the envelope with their status, anything else a 500
 * with no detail. Unknown endpoints answer 404 in the envelope.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
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
      if (e.httpStatus >= 500) request.log.error({ err, code: e.code }, 'request failed');
      else request.log.info({ code: e.code, status: e.httpStatus }, 'request rejected');
      if (e.httpStatus === 401) reply.header('www-authenticate', 'Basic realm="zulip"');
      const retryAfter = e.data['retry-after'];
      if (e.httpStatus === 429 && typeof retryAfter === 'number') reply.header('retry-after', String(Math.ceil(retryAfter)));
      return reply.code(e.httpStatus).send(errorBody(e));
    });
    app.setNotFoundHandler((_request, reply) => reply.code(404).send({ result: 'error', msg: 'Not Found', code: 'BAD_REQUEST' }));
  },
  { name: 'error-envelope' },
);

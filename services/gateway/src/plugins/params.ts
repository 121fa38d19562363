/**
 * Zulip's parameter conventions at the edge (api-notes §6.2): parameters come from the
 * query string on every method and from urlencoded or multipart bodies; both are merged
 * (the body wins). Parameters no route asked for are reported back in
 * `ignored_parameters_unsupported` on success instead of being dropped silently.
 */
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '@zc/shared/errors';
import { bool, int, parseParams, str, type Param, type ParamValues } from '@zc/shared/params';

declare module 'fastify' {
  interface FastifyRequest {
    ignoredParams: string[] | null;
  }
  interface FastifyContextConfig {
    /** The route streams multipart bodies itself (uploads), with its own size limit. */
    streamsMultipart?: boolean;
  }
}

/**
 * Largest multipart field value, in bytes. busboy silently truncates longer values to this
 * size, so a value that reaches it is refused rather than passed on cut short.
 */
export const MULTIPART_FIELD_LIMIT = 1024 * 1024;
/**
 * A whole multipart body of a route that parses it: the same as any other body (app.ts's
 * bodyLimit). busboy counts per part, not per body, so the declared length is checked before
 * a byte is read, and a body that declares none is refused (every client sends one).
 */
export const MULTIPART_BODY_LIMIT = 1024 * 1024;
/** A refused multipart body declared up to this long is read and dropped, keeping the connection (see the hook). */
export const REFUSED_BODY_DRAIN_LIMIT = 64 * 1024 * 1024;
/** Whether a request body refused unread, with this Content-Length, is drained (else the connection closes). */
export const drainsWhenRefused = (contentLength: string | undefined): boolean => contentLength !== undefined && Number(contentLength) <= REFUSED_BODY_DRAIN_LIMIT;

const MULTIPART_CONTENT_TYPE = /^multipart\/form-data\b/i;

const JSON_CONTENT_TYPE = /^application\/([\w.+-]+\+)?json\b/i;

const fieldTooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'Request body too large', 413);

/** Merged query and body parameters of a request, as raw text values (JSON body values as decoded). */
export function rawParams(request: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  const jsonBody = JSON_CONTENT_TYPE.test(request.headers['content-type'] ?? '');
  const multipart = request.isMultipart();
  for (const src of [request.query, request.body]) {
    if (!src || typeof src !== 'object' || Buffer.isBuffer(src)) continue;
    const fromJson = jsonBody && src === request.body;
    for (const [k, v] of Object.entries(src as Record<string, unknown>)) {
      // In a form or query string a key sent twice arrives as an array and Zulip (Django)
      // takes the last value; in a JSON body an array is the value itself.
      const value = Array.isArray(v) && !fromJson ? v[v.length - 1] : v;
      if (multipart && src === request.body && typeof value === 'string' && Buffer.byteLength(value) >= MULTIPART_FIELD_LIMIT) throw fieldTooLarge();
      out[k] = value;
    }
  }
  return out;
}

/**
 * Each route's parameter declarations (`METHOD url` → specs), recorded the first time the
 * route parses its parameters: the fuzz suite generates requests from them.
 */
export const declaredParams = new Map<string, Record<string, Param<unknown>>>();

/** Parses the request's parameters against `specs`; unknown ones are remembered for the reply. */
export function params<S extends Record<string, Param<unknown>>>(request: FastifyRequest, specs: S): ParamValues<S> {
  const route = `${request.method} ${request.routeOptions.url}`;
  if (!declaredParams.has(route)) declaredParams.set(route, specs);
  const { values, ignored } = parseParams(rawParams(request), specs);
  request.ignoredParams = ignored.length ? ignored : null;
  return values;
}

/**
 * An optional parameter spec per property of a flat TypeBox object of booleans, integers and
 * strings (e.g. the user settings), so a route takes exactly the names its contract declares.
 */
export function scalarParams(schema: { properties: Record<string, { type?: unknown }> }): Record<string, Param<unknown>> {
  const out: Record<string, Param<unknown>> = {};
  for (const [name, s] of Object.entries(schema.properties)) {
    out[name] = s.type === 'boolean' ? bool().optional() : s.type === 'integer' ? int().optional() : str().optional();
  }
  return out;
}

export default fp(
  async (app: FastifyInstance) => {
    await app.register(formbody);
    // Multipart bodies bypass Fastify's bodyLimit, so these limits are all that bounds them:
    // Zulip requests have a handful of fields and at most one file part (uploads stream their
    // files elsewhere, under max_file_upload_size: here a file part is just a field).
    await app.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: MULTIPART_FIELD_LIMIT, files: 1, fieldSize: MULTIPART_FIELD_LIMIT, fields: 64, parts: 65, headerPairs: 100 },
    });
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.config.streamsMultipart || !MULTIPART_CONTENT_TYPE.test(request.headers['content-type'] ?? '')) return done();
      const length = request.headers['content-length'];
      if (length !== undefined && !(Number(length) > MULTIPART_BODY_LIMIT)) return done();
      // Refused before its body is read. Up to REFUSED_BODY_DRAIN_LIMIT, Node reads the rest
      // and drops it after the answer, and the connection stays open: a client that sends its
      // whole body before reading its answer gets the refusal. Closing instead, with bytes still
      // arriving, makes the kernel answer them with a reset, which can throw away the answer the
      // client had not read yet (EPIPE in the e2e test). Beyond the limit, or with no length
      // to know the end by, the connection is closed: not worth reading.
      if (!drainsWhenRefused(length)) reply.header('connection', 'close');
      if (length === undefined) throw new AppError('BAD_REQUEST', 'A multipart body needs a Content-Length', 411);
      throw fieldTooLarge();
    });
    app.decorateRequest('ignoredParams', null);
    app.addHook('preSerialization', (request, _reply, payload, done) => {
      if (request.ignoredParams && payload && typeof payload === 'object' && (payload as { result?: string }).result === 'success') {
        return done(null, { ...(payload as object), ignored_parameters_unsupported: request.ignoredParams });
      }
      done(null, payload);
    });
  },
  { name: 'zulip-params' },
);

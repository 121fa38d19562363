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
import { parseParams, type Param, type ParamValues } from '@zc/shared/params';

declare module 'fastify' {
  interface FastifyRequest {
    ignoredParams: string[] | null;
  }
}

/** Merged query and body parameters of a request, as raw text values. */
export function rawParams(request: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const src of [request.query, request.body]) {
    if (!src || typeof src !== 'object' || Buffer.isBuffer(src)) continue;
    for (const [k, v] of Object.entries(src as Record<string, unknown>)) {
      // A key sent twice arrives as an array; Zulip (Django) takes the last value.
      out[k] = Array.isArray(v) ? v[v.length - 1] : v;
    }
  }
  return out;
}

/** Parses the request's parameters against `specs`; unknown ones are remembered for the reply. */
export function params<S extends Record<string, Param<unknown>>>(request: FastifyRequest, specs: S): ParamValues<S> {
  const { values, ignored } = parseParams(rawParams(request), specs);
  request.ignoredParams = ignored.length ? ignored : null;
  return values;
}

export default fp(
  async (app: FastifyInstance) => {
    await app.register(formbody);
    await app.register(multipart, { attachFieldsToBody: 'keyValues', limits: { fileSize: 25 * 1024 * 1024, files: 1 } });
    app.decorateRequest('ignoredParams', null);
    app.addHook('preSerialization', async (request, _reply, payload) => {
      if (request.ignoredParams && payload && typeof payload === 'object' && (payload as { result?: string }).result === 'success') {
        return { ...(payload as object), ignored_parameters_unsupported: request.ignoredParams };
      }
      return payload;
    });
  },
  { name: 'zulip-params' },
);

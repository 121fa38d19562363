/**
 * The one parameter layer for input no endpoint accepts (shared params/well-formed.ts): path
 * segments, query and body parameters (names and values, JSON bodies at any depth) are
 * checked before any route runs, so no service ever sees NUL, a lone surrogate, a JSON value
 * nested thousands deep or an id beyond what our ids can be. JSON text inside form fields
 * is checked where it is decoded (the shared `json()` parameter).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '@zc/shared/errors';
import { checkWellFormedText, checkWellFormedValue } from '@zc/shared/params';

const DIGITS = /^\d+$/;

/** Path segments: well-formed text, and an all-digit segment is an id, which fits in 2^53. */
function checkPathParams(params: unknown): void {
  if (!params || typeof params !== 'object') return;
  for (const [name, v] of Object.entries(params as Record<string, unknown>)) {
    if (typeof v !== 'string') continue;
    checkWellFormedText(v, name);
    if (name !== '*' && DIGITS.test(v) && !Number.isSafeInteger(Number(v))) {
      throw new AppError('BAD_REQUEST', `${name} is too large`, 400, { var_name: name });
    }
  }
}

function checkFields(fields: unknown): void {
  if (!fields || typeof fields !== 'object' || Buffer.isBuffer(fields)) return;
  for (const [name, v] of Object.entries(fields as Record<string, unknown>)) {
    checkWellFormedText(name, 'parameter name');
    checkWellFormedValue(v, name);
  }
}

export default fp(
  async (app: FastifyInstance) => {
    app.addHook('preValidation', (request, _reply, done) => {
      if (request.routeOptions.url) {
        checkPathParams(request.params);
        checkFields(request.query);
        checkFields(request.body);
      }
      done();
    });
  },
  { name: 'input-guard' },
);

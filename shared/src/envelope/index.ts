import type { AppError } from '../errors/index.js';

export interface SuccessEnvelope {
  result: 'success';
  msg: '';
  [field: string]: unknown;
}

/** `{result:"success", msg:"", ...fields}`, the body of every successful response. */
export function success<T extends Record<string, unknown>>(fields?: T): SuccessEnvelope & T {
  return { result: 'success', msg: '', ...(fields ?? ({} as T)) };
}

/** HTTP 200 `partially_completed` (spec section 7): a bulk operation ran out of time. */
export function partiallyCompleted(fields: Record<string, unknown> = {}) {
  return { result: 'partially_completed', msg: '', code: 'REQUEST_TIMEOUT', ...fields };
}

/** The body of an error response; `code` is omitted where the spec says the error has none. */
export function errorBody(e: AppError): Record<string, unknown> {
  const body: Record<string, unknown> = { result: 'error', msg: e.message };
  if (e.code !== null) body.code = e.code;
  return { ...body, ...e.data };
}

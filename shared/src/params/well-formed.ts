/**
 * What no endpoint accepts, refused once for every parameter (issue 13): text holding NUL
 * (PostgreSQL cannot store it), text that is not valid Unicode (a lone UTF-16 surrogate from
 * a `\ud800` escape: PostgreSQL refuses it in jsonb, and UTF-8 encoders silently replace it),
 * and JSON nested deeper than any Zulip parameter is (narrows, drafts and subscriptions are
 * three levels deep), which would otherwise cost recursion in every layer that walks it.
 */
import { AppError } from '../errors/index.js';

/** Deepest nesting of arrays and objects a parameter may have. */
export const MAX_PARAM_DEPTH = 16;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const invalid = (msg: string, name: string) => new AppError('BAD_REQUEST', msg, 400, { var_name: name });

/** Throws BAD_REQUEST (naming `name`) unless `text` is free of NUL and valid Unicode. */
export function checkWellFormedText(text: string, name: string): void {
  if (text.includes('\u0000')) throw invalid(`${name} must not contain null bytes`, name);
  if (LONE_SURROGATE.test(text)) throw invalid(`${name} is not valid Unicode`, name);
}

/**
 * Throws BAD_REQUEST unless every string (object keys included) in `value` passes
 * `checkWellFormedText` and it nests at most MAX_PARAM_DEPTH deep. Buffers (file parts) are
 * not text and are skipped.
 */
export function checkWellFormedValue(value: unknown, name: string, depth = 0): void {
  if (typeof value === 'string') return checkWellFormedText(value, name);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return;
  if (depth >= MAX_PARAM_DEPTH) throw invalid(`${name} is nested too deeply`, name);
  if (Array.isArray(value)) {
    for (const v of value) checkWellFormedValue(v, name, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    checkWellFormedText(k, name);
    checkWellFormedValue(v, name, depth + 1);
  }
}

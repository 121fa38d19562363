/**
 * Zulip's request parameters, as real clients send them (spec section 1, api-notes §4, §6):
 * every value arrives as text (query string, urlencoded or multipart body); lists and
 * objects are JSON inside the text; booleans and integers may be bare (`5`) or JSON (`true`).
 * A route declares a spec per parameter; `parseParams` returns typed values and the names
 * of parameters no spec mentioned (for `ignored_parameters_unsupported`).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { AppError, requestVariableMissing } from '../errors/index.js';
import { checkWellFormedValue } from './well-formed.js';

export { MAX_PARAM_DEPTH, checkWellFormedText, checkWellFormedValue } from './well-formed.js';

export type RawParams = Record<string, unknown>;

export interface Param<T> {
  readonly required: boolean;
  readonly defaultValue?: T;
  /** `raw` is never undefined here. */
  decode(raw: unknown, name: string): T;
}

type ParamValue<P> = P extends Param<infer T> ? T : never;
export type ParamValues<S extends Record<string, Param<unknown>>> = { [K in keyof S]: ParamValue<S[K]> };

const invalid = (msg: string, name: string) => new AppError('BAD_REQUEST', msg, 400, { var_name: name });

/** JSON text of a field, decoded; what it decodes to passes the same checks as any parameter. */
function jsonDecode(raw: unknown, name: string): unknown {
  let v: unknown = raw;
  if (typeof raw === 'string') {
    try {
      v = JSON.parse(raw);
    } catch {
      throw invalid(`Argument "${name}" is not valid JSON.`, name);
    }
  }
  checkWellFormedValue(v, name);
  return v;
}

function make<T>(decode: (raw: unknown, name: string) => T): ParamBuilder<T> {
  return new ParamBuilder(decode);
}

export class ParamBuilder<T> implements Param<T> {
  readonly required = true;
  constructor(readonly decode: (raw: unknown, name: string) => T) {}
  /** The parameter may be absent; it then takes `defaultValue`. */
  optional(): Param<T | undefined>;
  optional(defaultValue: T): Param<T>;
  optional(defaultValue?: T): Param<T | undefined> {
    return { required: false, defaultValue, decode: this.decode };
  }
}

/** Plain text, taken as sent (a JSON-looking string stays a string, as Zulip does for `str`). */
export const str = (opts: { maxLength?: number } = {}) =>
  make<string>((raw, name) => {
    if (typeof raw !== 'string') {
      if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
      throw invalid(`${name} is not a string`, name);
    }
    if (raw.includes('\u0000')) throw invalid(`${name} must not contain null bytes`, name);
    if (opts.maxLength !== undefined && raw.length > opts.maxLength) {
      throw invalid(`${name} is too long (limit: ${opts.maxLength} characters)`, name);
    }
    return raw;
  });

/** An integer, bare or JSON; rejects fractions, NaN and values beyond 2^53. */
export const int = (opts: { min?: number; max?: number } = {}) =>
  make<number>((raw, name) => {
    const v = typeof raw === 'string' ? (/^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN) : raw;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw invalid(`${name} is not an integer`, name);
    if (opts.min !== undefined && v < opts.min) throw invalid(`${name} is too small`, name);
    if (opts.max !== undefined && v > opts.max) throw invalid(`${name} is too large`, name);
    return v;
  });

/** A JSON boolean (`true`/`false`). */
export const bool = () =>
  make<boolean>((raw, name) => {
    const v = jsonDecode(raw, name);
    if (typeof v !== 'boolean') throw invalid(`${name} is not a boolean`, name);
    return v;
  });

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();
function checker<S extends TSchema>(schema: S): TypeCheck<S> {
  let c = checks.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    checks.set(schema, c);
  }
  return c as TypeCheck<S>;
}

/**
 * Whether a decoded JSON value holds a whole number beyond 2^53. JSON.parse rounds such a
 * literal to a neighbouring double, so `[9007199254740993]` would silently become a
 * different id; refusing it is the only honest answer (operations.md fault 23).
 */
function hasUnsafeInteger(v: unknown): boolean {
  if (typeof v === 'number') return Number.isInteger(v) && !Number.isSafeInteger(v);
  if (Array.isArray(v)) return v.some(hasUnsafeInteger);
  if (v && typeof v === 'object') return Object.values(v).some(hasUnsafeInteger);
  return false;
}

/** A JSON value inside the form field, validated against `schema`. */
export const json = <S extends TSchema>(schema: S, describe?: string) =>
  make<Static<S>>((raw, name) => {
    const v = jsonDecode(raw, name);
    if (hasUnsafeInteger(v)) throw invalid(describe ?? `Invalid ${name}: integer out of range`, name);
    const c = checker(schema);
    if (!c.Check(v)) {
      const first = c.Errors(v).First();
      const where = first?.path ? `${name}${first.path.replace(/\//g, '[').replace(/\[(\w+)/g, '[$1]')}` : name;
      throw invalid(describe ?? `Invalid ${where}${first ? `: ${first.message}` : ''}`, name);
    }
    return v as Static<S>;
  });

/** One of a fixed set of strings. */
export const oneOf = <const V extends readonly string[]>(values: V) =>
  make<V[number]>((raw, name) => {
    if (typeof raw !== 'string' || !values.includes(raw)) throw invalid(`Invalid ${name}`, name);
    return raw as V[number];
  });

/** A custom decoder for shapes the helpers above do not cover (e.g. anchor). */
export const custom = <T>(decode: (raw: unknown, name: string) => T) => make<T>(decode);

/** Decodes the JSON text of a field without validating (for custom decoders). */
export const decodeJsonField = jsonDecode;

export interface Parsed<S extends Record<string, Param<unknown>>> {
  values: ParamValues<S>;
  ignored: string[];
}

/**
 * Applies `specs` to the merged request parameters. Unknown names are not an error
 * (Zulip lists them in `ignored_parameters_unsupported`).
 */
export function parseParams<S extends Record<string, Param<unknown>>>(raw: RawParams, specs: S): Parsed<S> {
  const values: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const v = Object.hasOwn(raw, name) ? raw[name] : undefined;
    if (v === undefined) {
      if (spec.required) throw requestVariableMissing(name);
      values[name] = spec.defaultValue;
      continue;
    }
    values[name] = spec.decode(v, name);
  }
  const ignored = Object.keys(raw).filter((k) => !Object.hasOwn(specs, k));
  return { values: values as ParamValues<S>, ignored };
}

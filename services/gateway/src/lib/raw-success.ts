/**
 * A success envelope around fields that arrive as JSON text (`bus.requestRaw`, see
 * shared/src/bus/raw-json.ts): /register's state of a large realm is passed on without being
 * parsed and serialised again. The envelope's keys are spliced around the text, so it must not
 * hold `result`, `msg` or `ignored_parameters_unsupported` of its own.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RawJson } from '@zc/shared/bus';

export function rawSuccessText(fields: RawJson, ignoredParams: readonly string[] | null): string {
  const inner = fields.text.trim().slice(1, -1).trim();
  const members = ['"result":"success"', '"msg":""'];
  if (inner) members.push(inner);
  // What the params plugin adds to every other success reply (its hook sees objects only).
  if (ignoredParams?.length) members.push(`"ignored_parameters_unsupported":${JSON.stringify(ignoredParams)}`);
  return `{${members.join(',')}}`;
}

/** Sends `fields` as a success reply; a string payload skips Fastify's serialisation. */
export function sendRawSuccess(request: FastifyRequest, reply: FastifyReply, fields: RawJson): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(rawSuccessText(fields, request.ignoredParams));
}

/** A success reply's members: `"key":value` each (without braces) as JSON text, UTF-8 bytes, or bytes in parts. */
export type SuccessMembers = ReadonlyArray<string | Buffer | readonly Buffer[]>;

const OPEN = Buffer.from('{"result":"success","msg":""');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from('}');

/**
 * Sends a success reply whose members come as JSON text or UTF-8 bytes: large cached parts go
 * out without being encoded again, joined once into the reply's body.
 */
export function sendSuccessMembers(request: FastifyRequest, reply: FastifyReply, members: SuccessMembers): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(successMembersBody(members, request.ignoredParams));
}

/** A success envelope of `members` (and the parameters to report as ignored) as one body. */
export function successMembersBody(members: SuccessMembers, ignored: readonly string[] | null | undefined): Buffer {
  return Buffer.concat(successMembersParts(members, ignored));
}

/**
 * `successMembersBody` in parts, for a writer that sends them as they are: a 1,000-user
 * presence answer's cached bytes then go out without being copied into a new buffer per
 * request, whose allocation (tens of kilobytes, outside V8's heap) kept the gateway's major GC
 * running about once a second under 50 reads a second.
 */
export function successMembersParts(members: SuccessMembers, ignored: readonly string[] | null | undefined): Buffer[] {
  const parts: Buffer[] = [OPEN];
  for (const m of members) {
    parts.push(COMMA);
    if (typeof m === 'string') parts.push(Buffer.from(m));
    else if (Buffer.isBuffer(m)) parts.push(m);
    else for (const b of m) parts.push(b);
  }
  if (ignored?.length) parts.push(Buffer.from(`,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`));
  parts.push(CLOSE);
  return parts;
}

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

/**
 * Sends a success reply whose members come as JSON text or UTF-8 bytes (`"key":value` each,
 * without braces): large cached parts go out without being encoded again.
 */
export function sendSuccessMembers(request: FastifyRequest, reply: FastifyReply, members: ReadonlyArray<string | Buffer>): FastifyReply {
  const parts: Buffer[] = [Buffer.from('{"result":"success","msg":""')];
  for (const m of members) parts.push(Buffer.from(','), typeof m === 'string' ? Buffer.from(m) : m);
  const ignored = request.ignoredParams;
  if (ignored?.length) parts.push(Buffer.from(`,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`));
  parts.push(Buffer.from('}'));
  return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts));
}

/**
 * The checks of POST /messages that need nothing but the request (spec 4.2, section 8), with
 * Zulip's messages: content and topic normalisation, the message type and the recipient
 * list in every form clients send it.
 */
import { LIMITS } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';

const CONTENT_TRUNCATED = '\n[message truncated]';
const TOPIC_TRUNCATED = '...';

/** Cuts `s` to at most `maxBytes` UTF-8 bytes without splitting a character. */
function cutToBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character start.
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/**
 * Zulip's normalize_body: surrounding blank lines and trailing space go, empty and NUL are
 * refused, and content over the limit (10000 bytes, spec 8) is truncated with a marker
 * rather than rejected.
 */
export function normaliseContent(raw: string): string {
  const body = raw.replace(/\s+$/u, '').replace(/^\n+/, '');
  if (body === '') throw badRequest('Message must not be empty');
  if (body.includes('\u0000')) throw badRequest('Message must not contain null bytes');
  if (Buffer.byteLength(body, 'utf8') <= LIMITS.maxMessageLength) return body;
  return cutToBytes(body, LIMITS.maxMessageLength - Buffer.byteLength(CONTENT_TRUNCATED)) + CONTENT_TRUNCATED;
}

/** A stream message's topic: trimmed, required, truncated to 60 characters (Zulip 6.x: "..."). */
export function normaliseTopic(raw: string | undefined): string {
  if (raw === undefined) throw badRequest('Missing topic');
  const topic = raw.trim();
  if (topic === '') throw badRequest("Topic can't be empty");
  if (topic.includes('\u0000')) throw badRequest('Topic must not contain null bytes');
  const chars = [...topic];
  if (chars.length <= LIMITS.maxTopicLength) return topic;
  return chars.slice(0, LIMITS.maxTopicLength - TOPIC_TRUNCATED.length).join('') + TOPIC_TRUNCATED;
}

export type MessageKind = 'stream' | 'private';

/** `stream` (or `channel`) and `private` (or `direct`, its modern name). */
export function parseMessageType(raw: string): MessageKind {
  if (raw === 'stream' || raw === 'channel') return 'stream';
  if (raw === 'private' || raw === 'direct') return 'private';
  throw badRequest('Invalid message type');
}

/**
 * Where a JSON text can start (after JSON's whitespace): a bare stream name like `general`
 * cannot, and is not handed to JSON.parse, whose SyntaxError (a stack trace each) cost more
 * than the rest of parsing a send's parameters.
 */
const MAYBE_JSON = /^[ \t\n\r]*(?:[[{"\d-]|true|false|null)/;

function decodeMaybeJson(raw: unknown): unknown {
  if (typeof raw !== 'string' || !MAYBE_JSON.test(raw)) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export type StreamTarget = { stream_id: number } | { name: string };

/** A stream message's `to`: a name or an id, bare, JSON, or a one-element JSON list (Zulip's extract_stream_indicator). */
export function parseStreamTarget(raw: unknown): StreamTarget {
  let v = decodeMaybeJson(raw);
  if (Array.isArray(v)) {
    if (v.length !== 1) throw badRequest('Expected exactly one channel');
    v = v[0];
  }
  if (typeof v === 'number' && Number.isSafeInteger(v)) return { stream_id: v };
  if (typeof v === 'string') {
    if (v.trim() === '') throw badRequest('Missing channel name');
    return { name: v };
  }
  throw badRequest('Invalid data type for channel');
}

export type PrivateTargets = { user_ids: number[] } | { emails: string[] };

/**
 * A direct message's `to`: a JSON list of ids or of emails, one id, or a single email or
 * comma-separated emails as plain text (Zulip's extract_private_recipients). Duplicates go.
 */
export function parsePrivateTargets(raw: unknown): PrivateTargets {
  let v = decodeMaybeJson(raw);
  if (typeof v === 'string') v = v.split(',');
  if (typeof v === 'number') v = [v];
  if (!Array.isArray(v)) throw badRequest('Invalid data type for recipients');
  const items = v.map((x) => (typeof x === 'string' ? x.trim() : x)).filter((x) => x !== '');
  if (items.length === 0) throw badRequest('Message must have recipients');
  if (items.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) return { user_ids: [...new Set(items as number[])] };
  if (items.every((x) => typeof x === 'string')) {
    const seen = new Map<string, string>();
    for (const e of items as string[]) if (!seen.has(e.toLowerCase())) seen.set(e.toLowerCase(), e);
    return { emails: [...seen.values()] };
  }
  if (items.every((x) => typeof x === 'string' || typeof x === 'number')) {
    throw badRequest('Recipient lists may contain emails or user IDs, but not both.');
  }
  throw badRequest('Invalid data type for recipients');
}

/**
 * Clients whose own messages start read for their sender (api-notes §2.3): the interactive
 * apps, where the sender has obviously seen what they wrote. API clients' messages start unread.
 */
const INTERACTIVE_CLIENTS = new Set(['zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android', 'zulipflutter', 'test suite']);

export function readBySenderDefault(clientName: string): boolean {
  return INTERACTIVE_CLIENTS.has(clientName.toLowerCase());
}

/** "/me waves": a one-line message starting with /me (Zulip's is_me_message). */
export function isMeMessage(content: string): boolean {
  return /^\/me /.test(content) && !content.includes('\n');
}

/**
 * The address that posts email into a stream (spec 2.5 `email_address`), in Zulip's format:
 * `<slug>.<token>@<host>`. The slug is the stream name with every run of non-word
 * characters turned into one hyphen, folded to lower-case ASCII; when folding would lose
 * characters (a name in a non-Latin script, or a hyphen trimmed off an end) the slug is left
 * out so the address never shows a mangled name.
 */
import { randomBytes } from 'node:crypto';

/** A new stream's random token (32 hex digits, as Zulip's). */
export function newEmailToken(): string {
  return randomBytes(16).toString('hex');
}

function asciiSlug(text: string): string {
  const ascii = text.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  return ascii
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '');
}

export function streamEmailAddress(name: string, token: string, host: string): string {
  const hyphenated = name.replace(/[^\p{L}\p{N}\p{M}_]+/gu, '-');
  const slug = asciiSlug(hyphenated);
  const local = slug !== '' && slug.length === hyphenated.length ? `${slug}.${token}` : token;
  return `${local}@${host}`;
}

/** Zulip's check_full_name: the rules for a name a person or an administrator sets. */
import { badRequest } from '@zc/shared/errors';

export const MAX_NAME_LENGTH = 100;
export const MIN_NAME_LENGTH = 2;
/** Characters that would break mention syntax or email-style display (Zulip's NAME_INVALID_CHARS). */
const INVALID_CHARS = /[*`\\>"@\u0000-\u001f]/;

/** Returns the trimmed name, or throws Zulip's error for it. */
export function checkFullName(raw: string): string {
  const name = raw.trim();
  if (name.length > MAX_NAME_LENGTH) throw badRequest('Name too long!');
  if (name.length < MIN_NAME_LENGTH) throw badRequest('Name too short!');
  if (INVALID_CHARS.test(name)) throw badRequest('Invalid characters in name!');
  // A trailing `|15` would read as the id part of a mention (`@**name|15**`).
  if (/\|\d+$/.test(raw)) throw badRequest('Invalid format!');
  return name;
}

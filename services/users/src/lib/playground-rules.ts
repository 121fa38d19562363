/** Zulip's RealmPlayground field checks (zerver/models/realm_playgrounds.py at FL 155), with its messages. */
import { AppError } from '@zc/shared/errors';

export const PLAYGROUND_LIMITS = { name: 64, pygmentsLanguage: 40, urlPrefix: 200 } as const;

// Zulip's validate_pygments_language: the characters lexer names and aliases use.
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

function invalid(field: string, problem: string): never {
  throw new AppError('BAD_REQUEST', problem, 400, { errors: { [field]: [problem] } });
}

function checkLength(field: string, value: string, max: number): void {
  if (value.trim() === '') invalid(field, 'This field cannot be blank.');
  if (value.length > max) invalid(field, `Ensure this value has at most ${max} characters (it has ${value.length}).`);
}

export function checkPlayground(p: { name: string; pygments_language: string; url_prefix: string }): void {
  checkLength('name', p.name, PLAYGROUND_LIMITS.name);
  checkLength('pygments_language', p.pygments_language, PLAYGROUND_LIMITS.pygmentsLanguage);
  if (!PYGMENTS_LANGUAGE.test(p.pygments_language)) invalid('pygments_language', 'Invalid characters in pygments language');
  checkLength('url_prefix', p.url_prefix, PLAYGROUND_LIMITS.urlPrefix);
  let url: URL | undefined;
  try {
    url = new URL(p.url_prefix);
  } catch {
    url = undefined;
  }
  // Django's URLValidator: http(s) (or ftp) with a host.
  if (!url || !['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) || url.hostname === '') invalid('url_prefix', 'Enter a valid URL.');
}

// URL handling: the allow-list of schemes, local-link rewriting and the
// encoding of narrow URLs. Every href and src we emit passes `sanitizeUrl`.

const ALLOWED_SCHEMES = new Set(['http', 'https', 'mailto']);
const SCHEME_CHARS = /^[a-zA-Z][a-zA-Z0-9+.-]*$/;
/** Schemes that take a `//host` part when re-assembled. */
const NETLOC_SCHEMES = new Set(['http', 'https', 'ftp', 'file', 'ws', 'wss', 'sftp', 'git', 'svn', 'nntp', 'telnet']);

interface SplitUrl {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

/** Splits a URL into its five parts, the way Python's `urlsplit` does (which Zulip relies on). */
function splitUrl(url: string): SplitUrl {
  let rest = url;
  let scheme = '';
  const colon = rest.indexOf(':');
  if (colon > 0 && SCHEME_CHARS.test(rest.slice(0, colon))) {
    scheme = rest.slice(0, colon).toLowerCase();
    rest = rest.slice(colon + 1);
  }
  let netloc = '';
  if (rest.startsWith('//')) {
    let end = rest.length;
    for (const delimiter of ['/', '?', '#']) {
      const i = rest.indexOf(delimiter, 2);
      if (i >= 0 && i < end) end = i;
    }
    netloc = rest.slice(2, end);
    rest = rest.slice(end);
  }
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  let query = '';
  const question = rest.indexOf('?');
  if (question >= 0) {
    query = rest.slice(question + 1);
    rest = rest.slice(0, question);
  }
  return { scheme, netloc, path: rest, query, fragment };
}

function joinUrl({ scheme, netloc, path, query, fragment }: SplitUrl): string {
  let url = path;
  if (netloc || (scheme && NETLOC_SCHEMES.has(scheme) && !url.startsWith('//'))) {
    if (url && !url.startsWith('/')) url = `/${url}`;
    url = `//${netloc}${url}`;
  }
  if (scheme) url = `${scheme}:${url}`;
  if (query) url += `?${query}`;
  if (fragment) url += `#${fragment}`;
  return url;
}

/**
 * Returns the URL to use for a link target, or undefined when it must not be
 * linked. Without a scheme, `http://` is assumed; only http, https, mailto,
 * host-relative (`/…`) and fragment (`#…`) targets survive.
 */
export function sanitizeUrl(raw: string, depth = 0): string | undefined {
  // Control characters (our placeholder delimiters among them) never belong in a URL.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u001f\u007f]/.test(raw)) return undefined;
  const url = raw.replaceAll(' ', '%20');
  const parts = splitUrl(url);
  const { scheme, netloc, path, query, fragment } = parts;
  if (!scheme && !netloc && path.includes('@')) {
    return joinUrl({ ...parts, scheme: 'mailto' });
  }
  if (!scheme && !netloc && path.startsWith('/')) return joinUrl(parts);
  if (!scheme && !netloc && !path && !query && fragment) return `#${fragment}`;
  if (!scheme) return depth === 0 ? sanitizeUrl(`http://${raw}`, 1) : undefined;
  if (!ALLOWED_SCHEMES.has(scheme)) return undefined;
  return joinUrl(parts);
}

/** Links into this realm's web app or uploads become relative, so they open in place. */
export function relativizeLocalLink(url: string, realmUrl: string): string {
  const prefix = `${realmUrl.replace(/\/+$/, '')}/`;
  if (url.startsWith(`${prefix}#`) || url.startsWith(`${prefix}user_uploads/`)) return url.slice(prefix.length);
  return url;
}

/**
 * Encodes one component of a narrow URL: percent-encoding with `.` in place
 * of `%`, so the result survives in a URL fragment unchanged.
 */
export function encodeHashComponent(text: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(text)) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_~-]/.test(c)) out += c;
    else out += `.${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** `42-general-chat`: the channel part of a narrow URL. */
export function encodeChannel(id: number, name: string): string {
  return `${id}-${encodeHashComponent(name.replaceAll(' ', '-'))}`;
}

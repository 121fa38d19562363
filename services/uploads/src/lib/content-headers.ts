/**
 * The headers a stored file is served with. Nothing a browser would run from our origin is
 * shown inline (Zulip's INLINE_MIME_TYPES rule): HTML, SVG, XML and scripts go out as
 * attachments, with a type that cannot be sniffed into something runnable. Pure.
 */

/** Zulip's INLINE_MIME_TYPES: displayed in the browser; everything else is downloaded. */
const INLINE_TYPES = new Set([
  'application/pdf',
  'audio/aac',
  'audio/flac',
  'audio/mp4',
  'audio/mpeg',
  'audio/wav',
  'audio/webm',
  'image/apng',
  'image/avif',
  'image/gif',
  'image/jpeg',
  'image/png',
  'image/webp',
  'video/mp4',
  'video/quicktime',
  'video/webm',
]);

/** Types a browser may execute or render as a document even as a download target. */
const ACTIVE_TYPE = /^(text\/(html|xml|javascript|ecmascript)|application\/(xhtml\+xml|xml|javascript|ecmascript|x-shockwave-flash)|image\/svg\+xml)$/;

const BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  txt: 'text/plain',
  md: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  htm: 'text/html',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  zip: 'application/zip',
  gz: 'application/gzip',
  log: 'text/plain',
};

/**
 * The stored type: what the client said, or (none, or the generic octet-stream) a guess from
 * the name, as Zulip guesses when a part has no type. The multipart parser reports a part
 * without a Content-Type as `text/plain` (RFC 7578's default), and that is how
 * python-zulip-api's upload_file sends every file; so a `text/plain` gives way to a name that
 * says a type other than text (a photo.jpg is an image, not text).
 */
export function contentTypeOf(declared: string | undefined, fileName: string): string {
  const clean = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const ext = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  const guessed = ext ? BY_EXTENSION[ext] : undefined;
  if (clean === 'text/plain' && guessed && !guessed.startsWith('text/')) return guessed;
  if (clean !== '' && clean !== 'application/octet-stream' && /^[\w.+-]+\/[\w.+-]+$/.test(clean)) return clean;
  return guessed ?? 'application/octet-stream';
}

/** RFC 6266 Content-Disposition with an ASCII fallback name and the UTF-8 one. */
function disposition(kind: 'inline' | 'attachment', fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export interface ServedHeaders {
  'content-type': string;
  'content-disposition': string;
  'x-content-type-options': 'nosniff';
  'content-security-policy': string;
}

/** Headers to serve a stored file with. */
export function servedHeaders(contentType: string, fileName: string): ServedHeaders {
  const inline = INLINE_TYPES.has(contentType);
  return {
    'content-type': ACTIVE_TYPE.test(contentType) ? 'application/octet-stream' : contentType,
    'content-disposition': disposition(inline ? 'inline' : 'attachment', fileName),
    'x-content-type-options': 'nosniff',
    // Even if something renders, it runs nothing and loads nothing.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; media-src 'self'; img-src 'self'; sandbox",
  };
}

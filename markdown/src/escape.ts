// Escaping helpers. Every string that reaches the output HTML goes through one
// of these, so user text can never open a tag or leave an attribute value.

// An ampersand that already starts a character reference is kept: Zulip's
// output does the same for text (`&amp;` typed by a user stays `&amp;`), and a
// reference inside text content can only ever produce a character, not markup.
const BARE_AMPERSAND = /&(?!(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi;

/** Escapes text content the way Zulip's serializer does: `&` (unless already a reference), `<`, `>`. */
export function escapeText(text: string): string {
  let out = text;
  if (out.includes('&')) out = out.replace(BARE_AMPERSAND, '&amp;');
  if (out.includes('<')) out = out.replaceAll('<', '&lt;');
  if (out.includes('>')) out = out.replaceAll('>', '&gt;');
  return out;
}

/**
 * Escapes an attribute value. Unlike text, every `&` is escaped: a reference in
 * an attribute would be decoded by the browser after our URL checks ran.
 */
export function escapeAttribute(value: string): string {
  return value
    // Placeholder delimiters never belong in an attribute: dropping them means
    // stashed HTML can never be restored inside an attribute value.
    .replace(/[\u0002\u0003]/g, '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll('\n', '&#10;');
}

/** Escapes code block contents as the highlighter's HTML formatter does (quotes included). */
export function escapeCode(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Escapes `&`, `<` and `>` only, always (no reference is kept). */
export function escapeMinimal(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** Escapes like Python's `html.escape` (used for TeX error text in display math). */
export function escapeWithQuotes(text: string): string {
  return escapeMinimal(text).replaceAll('"', '&quot;').replaceAll("'", '&#x27;');
}

// Realm linkifiers: administrator-written patterns that turn text such as
// `#123` into links. Patterns are compiled and run only with RE2, whose
// matching time is linear, because they are untrusted input.

import { RE2 } from 're2-wasm';
import type { Linkifier } from './context.js';
import { perText } from './inline/scan.js';
import { expandUriTemplate, isValidUriTemplate, uriTemplateVariables } from './uri-template.js';

const BEFORE = 'zc_linkifier_before';
const MATCH = 'zc_linkifier_match';

/**
 * A linkifier matches only at the start, after whitespace or an opening
 * character, and not when a letter or digit follows directly. RE2 has no
 * look-around, so the neighbours are consumed in groups of their own (RE2's
 * `\s` is ASCII-only, hence the extra Unicode spaces).
 */
function preparePattern(source: string): string {
  return `(?P<${BEFORE}>^|\\s|\\x{85}|\\pZ|['"(,:<])(?P<${MATCH}>${source})(?:$|[^\\pL\\pN])`;
}

export interface LinkifierMatch {
  /** Offsets (UTF-16) of the linkified text. */
  start: number;
  end: number;
  text: string;
  url: string;
}

/** A compiled linkifier that finds matches in a string from a position. */
export class CompiledLinkifier {
  private readonly re: RE2;

  constructor(readonly linkifier: Linkifier) {
    this.re = new RE2(preparePattern(linkifier.pattern), 'gu');
  }

  /** The first match starting at or after `from` (UTF-16 offset). */
  find(text: string, from: number): LinkifierMatch | undefined {
    // RE2's wrapper copies the whole input on every search, so search only
    // from one character before `from` (kept as context for the boundary
    // group; `^` cannot match there since the search starts after it).
    const base = from > 0 ? from - 1 : 0;
    const slice = base > 0 ? text.slice(base) : text;
    const offsets = offsetsFor(slice);
    this.re.lastIndex = offsets.toCodePoint(from - base);
    const m = this.re.exec(slice);
    if (!m?.groups) return undefined;
    const before = m.groups[BEFORE] ?? '';
    const matched = m.groups[MATCH] ?? '';
    const start = base + offsets.toUtf16(m.index) + before.length;
    const values: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(m.groups)) if (name !== BEFORE && name !== MATCH) values[name] = value;
    return {
      start,
      end: start + matched.length,
      text: matched,
      url: expandUriTemplate(this.linkifier.url_template, values),
    };
  }
}

/**
 * RE2 (as built for WebAssembly) counts positions in code points, JavaScript
 * in UTF-16 units; this converts when the text has characters outside the BMP.
 */
class CodePointOffsets {
  private readonly utf16ByCodePoint: number[] | undefined;

  constructor(text: string) {
    if (!/[\ud800-\udfff]/.test(text)) return;
    const table: number[] = [];
    let i = 0;
    for (const c of text) {
      table.push(i);
      i += c.length;
    }
    table.push(i);
    this.utf16ByCodePoint = table;
  }

  toUtf16(codePoint: number): number {
    return this.utf16ByCodePoint ? (this.utf16ByCodePoint[codePoint] ?? codePoint) : codePoint;
  }

  toCodePoint(utf16: number): number {
    const table = this.utf16ByCodePoint;
    if (!table) return utf16;
    let lo = 0;
    let hi = table.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((table[mid] as number) <= utf16) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

const offsetsFor = perText((text) => new CodePointOffsets(text));

const compiled = new Map<string, CompiledLinkifier | null>();

/** Compiles (and caches) a linkifier; undefined when its pattern is not valid RE2. */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | undefined {
  const key = `${linkifier.pattern}\u0000${linkifier.url_template}`;
  let entry = compiled.get(key);
  if (entry === undefined) {
    try {
      entry = new CompiledLinkifier(linkifier);
    } catch {
      entry = null;
    }
    // A realm rarely has more than a few dozen; the bound only guards memory.
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, entry);
  }
  return entry ?? undefined;
}

/** Named groups declared in a pattern, `(?P<name>…)` or `(?<name>…)`. */
function groupNames(pattern: string): string[] {
  const names: string[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(') {
      const m = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(pattern.slice(i, i + 80));
      if (m) names.push(m[1] as string);
    }
  }
  return names;
}

function pyRepr(name: string): string {
  return name.includes("'") && !name.includes('"') ? `"${name}"` : `'${name.replaceAll("'", "\\'")}'`;
}

/**
 * Validates a linkifier as Zulip does; returns its error message (the first
 * one, pattern errors before template errors) or undefined when it is valid.
 */
export function validateLinkifier(pattern: string, urlTemplate: string): string | undefined {
  try {
    new RE2(pattern, 'u');
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const prefix = `Invalid regular expression: /${pattern}/u: `;
    return `Bad regular expression: ${message.startsWith(prefix) ? message.slice(prefix.length) : message}`;
  }
  if (!isValidUriTemplate(urlTemplate)) return 'Invalid URL template.';
  const groups = new Set(groupNames(pattern));
  const variables = new Set(uriTemplateVariables(urlTemplate));
  const missingInPattern = [...variables].filter((v) => !groups.has(v)).sort();
  if (missingInPattern.length) {
    return `Group ${pyRepr(missingInPattern[0] as string)} in URL template is not present in linkifier pattern.`;
  }
  const missingInTemplate = [...groups].filter((g) => !variables.has(g)).sort();
  if (missingInTemplate.length) {
    return `Group ${pyRepr(missingInTemplate[0] as string)} in linkifier pattern is not present in URL template.`;
  }
  return undefined;
}

/**
 * Converts a legacy `url_format_string` (`https://x/%(id)s`) to a URL
 * template (`https://x/{id}`): `%%` was a literal percent sign, and literal
 * braces must be percent-encoded in a template.
 */
export function urlFormatStringToTemplate(format: string): string {
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string;
    if (c === '%') {
      const named = /^%\(([^)]*)\)s/.exec(format.slice(i));
      if (named) {
        out += `{${named[1]}}`;
        i += named[0].length - 1;
        continue;
      }
      if (format[i + 1] === '%') i++;
      out += '%';
    } else if (c === '{') {
      out += '%7B';
    } else if (c === '}') {
      out += '%7D';
    } else {
      out += c;
    }
  }
  return out;
}

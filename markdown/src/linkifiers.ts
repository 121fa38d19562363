// Realm linkifiers: administrator-written patterns that turn text such as
// `#123` into links. Patterns are compiled and run only with RE2 semantics,
// whose matching time is linear, because they are untrusted input.
//
// The engine is re2js (RE2 ported to plain JavaScript), not re2-wasm: the
// WebAssembly build has a fixed 16 MiB heap that is never given back, so one
// process could hold about 70 compiled linkifiers across all realms; the next
// compile aborted the module and every later linkifier, in every realm, stopped
// rendering and validating until a restart (issue 16's sequences found it).

import { RE2JS, RE2JSSyntaxException } from 're2js';
import type { Linkifier } from './context.js';
import { expandUriTemplate, isValidUriTemplate, uriTemplateVariables } from './uri-template.js';
import { sanitizeUrl } from './urls.js';

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
  private readonly re: RE2JS;
  private readonly groups: string[];

  constructor(readonly linkifier: Linkifier) {
    this.re = RE2JS.compile(preparePattern(linkifier.pattern));
    this.groups = Object.keys(this.re.namedGroups()).filter((g) => g !== BEFORE && g !== MATCH);
  }

  /** The first match starting at or after `from` (UTF-16 offset). */
  find(text: string, from: number): LinkifierMatch | undefined {
    const m = this.re.matcher(text);
    // One character before `from` is searched too, as the boundary group's
    // context (`^` matches only at the start of the whole text).
    if (!m.find(from > 0 ? from - 1 : 0)) return undefined;
    const start = m.start(MATCH);
    const matched = m.group(MATCH) ?? '';
    const values: Record<string, string | undefined> = {};
    for (const name of this.groups) values[name] = m.group(name) ?? undefined;
    return {
      start,
      end: start + matched.length,
      text: matched,
      url: expandUriTemplate(this.linkifier.url_template, values),
    };
  }
}

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
    if (compiled.size > 5000) compiled.clear();
    compiled.set(key, entry);
  }
  return entry ?? undefined;
}

/**
 * re2js words its syntax errors as Go's regexp package does; Zulip (Python's
 * re2 binding) reports RE2's own wording, `<what>: <where>`.
 */
const RE2_WORDING: Array<[RegExp, string]> = [
  [/^missing closing \)/, 'missing )'],
  [/^missing closing \]/, 'missing ]'],
  [/^unexpected \)/, 'unexpected )'],
  [/^trailing backslash/, 'trailing \\'],
  [/^invalid nested repetition operator/, 'bad repetition operator'],
  [/^invalid repeat count/, 'invalid repetition size'],
  [/^missing argument to repetition operator/, 'no argument for repetition operator'],
  [/^invalid or unsupported Perl syntax/, 'invalid perl operator'],
  [/^invalid named capture/, 'invalid named capture group'],
  [/^duplicate capture group name/, 'invalid named capture group'],
];

function re2Wording(e: unknown): string {
  const raw = e instanceof Error ? e.message : String(e);
  const m = /^error parsing regexp: ([^:]+): `([\s\S]*)`$/.exec(raw);
  if (!m) return raw.replace(/^error parsing regexp: /, '');
  const what = m[1] as string;
  const wording = RE2_WORDING.find(([re]) => re.test(what))?.[1] ?? what;
  return `${wording}: ${m[2] as string}`;
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
    RE2JS.compile(pattern);
  } catch (e) {
    if (!(e instanceof RE2JSSyntaxException)) throw e;
    return `Bad regular expression: ${re2Wording(e)}`;
  }
  if (!isValidUriTemplate(urlTemplate)) return 'Invalid URL template.';
  // A template whose own text names a scheme links only to http(s), mailto or this server:
  // expanded with harmless values, it must be a URL content would link.
  const sample = Object.fromEntries(uriTemplateVariables(urlTemplate).map((v) => [v, '1']));
  if (sanitizeUrl(expandUriTemplate(urlTemplate, sample)) === undefined) return 'Invalid URL template.';
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

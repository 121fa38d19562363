/**
 * Validation of linkifiers as administrators type them: the pattern must compile under RE2
 * (linear time, never a backtracking engine: the pattern runs on every message), the URL
 * template must be an RFC 6570 template, and the pattern's named groups and the template's
 * variables must be the same set. Messages are Zulip's.
 */
import { RE2 } from 're2-wasm';
import { AppError } from '@zc/shared/errors';

const invalid = (field: 'pattern' | 'url_template', msg: string) => new AppError('BAD_REQUEST', msg, 400, { errors: { [field]: [msg] } });

/** Named groups of a pattern, `(?P<name>...)` (Python style, as Zulip writes them) or `(?<name>...)`. */
export function patternGroupNames(pattern: string): string[] {
  const names: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '(') continue;
    const m = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(pattern.slice(i, i + 80));
    if (m) names.push(m[1] as string);
  }
  return names;
}

const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&']);
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;

/** Variable names of an RFC 6570 template, or undefined when it is not a valid template. */
export function templateVariables(template: string): string[] | undefined {
  const names: string[] = [];
  let i = 0;
  while (i < template.length) {
    const c = template[i] as string;
    if (c === '}') return undefined;
    if (c !== '{') {
      // Literals may not contain spaces, quotes or angle brackets (RFC 6570 §2.1).
      if (/[\s"'<>\\^`|]/.test(c)) return undefined;
      i++;
      continue;
    }
    const end = template.indexOf('}', i);
    if (end < 0) return undefined;
    let expr = template.slice(i + 1, end);
    if (expr === '' || expr.includes('{')) return undefined;
    if (OPERATORS.has(expr[0] as string)) expr = expr.slice(1);
    for (const spec of expr.split(',')) {
      const name = spec.replace(/\*$/, '').replace(/:[1-9][0-9]{0,3}$/, '');
      if (!VARNAME.test(name)) return undefined;
      names.push(name);
    }
    i = end + 1;
  }
  return names;
}

/** `%(name)s` (the legacy url_format_string) to the equivalent RFC 6570 template. */
export function legacyFormatToTemplate(format: string): string {
  return format.replace(/%\((\w+)\)s|%%/g, (m, name: string | undefined) => (name ? `{${name}}` : '%'));
}

/** The legacy `%(name)s` form of a simple template, for clients of the old `realm_filters` shape. */
export function templateToLegacyFormat(template: string): string {
  return template.replace(/%/g, '%%').replace(/\{[+#]?(\w+)\}/g, '%($1)s');
}

/** Throws Zulip's validation error for a bad pattern or template; returns the compiled pattern. */
export function checkLinkifier(pattern: string, urlTemplate: string): RE2 {
  let re: RE2;
  try {
    re = new RE2(pattern, 'u');
  } catch (e) {
    const detail = (e as Error).message.replace(/^Invalid regular expression: \/.*\/u: /s, '');
    throw invalid('pattern', `Bad regular expression: ${detail}`);
  }
  if (pattern.trim() === '') throw invalid('pattern', 'Bad regular expression: empty pattern');
  const vars = templateVariables(urlTemplate);
  if (vars === undefined || urlTemplate.trim() === '') throw invalid('url_template', 'Invalid URL template.');
  const groups = new Set(patternGroupNames(pattern));
  for (const v of vars) {
    if (!groups.has(v)) throw invalid('url_template', `Group '${v}' in URL template is not present in linkifier pattern.`);
  }
  const used = new Set(vars);
  for (const g of groups) {
    if (!used.has(g)) throw invalid('pattern', `Group '${g}' in linkifier pattern is not present in URL template.`);
  }
  return re;
}

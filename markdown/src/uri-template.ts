// RFC 6570 URI templates (all four levels, for string values), which Zulip
// uses for linkifier URLs: `https://github.com/{org}/{repo}/issues/{id}`.

type Operator = '' | '+' | '#' | '.' | '/' | ';' | '?' | '&';

interface VarSpec {
  name: string;
  prefix: number | undefined;
  explode: boolean;
}

type Part = { literal: string } | { operator: Operator; vars: VarSpec[] };

const OPERATORS = new Set(['+', '#', '.', '/', ';', '?', '&']);
const RESERVED_OPERATORS = new Set(['=', ',', '!', '@', '|']);
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;
const LITERAL_FORBIDDEN = /[\s"'<>\\^`{|}]/;

/** Parses a template; undefined when it is not a valid RFC 6570 template. */
export function parseUriTemplate(template: string): Part[] | undefined {
  const parts: Part[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const literalEnd = open < 0 ? template.length : open;
    const literal = template.slice(i, literalEnd);
    if (literal.includes('}') || LITERAL_FORBIDDEN.test(literal) || /%(?![0-9A-Fa-f]{2})/.test(literal)) return undefined;
    if (literal) parts.push({ literal });
    if (open < 0) break;
    const close = template.indexOf('}', open);
    if (close < 0) return undefined;
    let body = template.slice(open + 1, close);
    if (body.includes('{')) return undefined;
    let operator: Operator = '';
    const first = body[0] ?? '';
    if (OPERATORS.has(first)) {
      operator = first as Operator;
      body = body.slice(1);
    } else if (RESERVED_OPERATORS.has(first)) {
      return undefined;
    }
    const vars: VarSpec[] = [];
    for (const spec of body.split(',')) {
      const m = /^([^:*]*)(?::([1-9][0-9]{0,3})|(\*))?$/.exec(spec);
      if (!m || !VARNAME.test(m[1] as string)) return undefined;
      vars.push({ name: m[1] as string, prefix: m[2] ? Number(m[2]) : undefined, explode: m[3] === '*' });
    }
    parts.push({ operator, vars });
    i = close + 1;
  }
  return parts;
}

export function isValidUriTemplate(template: string): boolean {
  return parseUriTemplate(template) !== undefined;
}

/** Variable names used by a (valid) template. */
export function uriTemplateVariables(template: string): string[] {
  const parts = parseUriTemplate(template) ?? [];
  const names: string[] = [];
  for (const part of parts) if ('vars' in part) for (const v of part.vars) if (!names.includes(v.name)) names.push(v.name);
  return names;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encodeValue(value: string, allowReserved: boolean): string {
  let out = '';
  const chars = [...value];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (UNRESERVED.test(c) || (allowReserved && RESERVED.test(c))) {
      out += c;
    } else if (allowReserved && c === '%' && /^[0-9A-Fa-f]{2}$/.test((chars[i + 1] ?? '') + (chars[i + 2] ?? ''))) {
      out += c; // an existing percent-encoded triplet is kept in reserved expansion
    } else {
      for (const byte of new TextEncoder().encode(c)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
  }
  return out;
}

const OPERATOR_RULES: Record<Operator, { first: string; sep: string; named: boolean; ifEmpty: string; reserved: boolean }> = {
  '': { first: '', sep: ',', named: false, ifEmpty: '', reserved: false },
  '+': { first: '', sep: ',', named: false, ifEmpty: '', reserved: true },
  '#': { first: '#', sep: ',', named: false, ifEmpty: '', reserved: true },
  '.': { first: '.', sep: '.', named: false, ifEmpty: '', reserved: false },
  '/': { first: '/', sep: '/', named: false, ifEmpty: '', reserved: false },
  ';': { first: ';', sep: ';', named: true, ifEmpty: '', reserved: false },
  '?': { first: '?', sep: '&', named: true, ifEmpty: '=', reserved: false },
  '&': { first: '&', sep: '&', named: true, ifEmpty: '=', reserved: false },
};

/** Expands a template; variables without a value are left out, as the RFC says. */
export function expandUriTemplate(template: string, values: Readonly<Record<string, string | undefined>>): string {
  const parts = parseUriTemplate(template);
  if (!parts) return template;
  let out = '';
  for (const part of parts) {
    if ('literal' in part) {
      out += part.literal;
      continue;
    }
    const rule = OPERATOR_RULES[part.operator];
    const pieces: string[] = [];
    for (const v of part.vars) {
      const raw = values[v.name];
      if (raw === undefined) continue;
      const value = v.prefix !== undefined ? [...raw].slice(0, v.prefix).join('') : raw;
      const encoded = encodeValue(value, rule.reserved);
      if (rule.named) pieces.push(value === '' ? `${v.name}${rule.ifEmpty}` : `${v.name}=${encoded}`);
      else pieces.push(encoded);
    }
    if (pieces.length) out += rule.first + pieces.join(rule.sep);
  }
  return out;
}

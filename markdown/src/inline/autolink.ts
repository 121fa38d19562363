// Bare URLs and e-mail addresses become links. A URL starts at the beginning
// or after whitespace or one of `'"(,:<`, and is either `http(s)://…` or a
// domain ending in a known top-level domain; it may have a path (with up to
// seven levels of balanced parentheses) and must be followed by optional
// closing punctuation and then whitespace or the end. The shortest URL that
// satisfies all that wins, so "see http://a.com/x." does not swallow the dot.
//
// Hand-written instead of one big regular expression: it stays linear on
// hostile input, and each rule is visible.

import { createRequire } from 'node:module';
import { atomicEl } from '../tree.js';
import { relativizeLocalLink, sanitizeUrl } from '../urls.js';
import type { InlinePattern } from './engine.js';
import { isWhitespace, isWordChar, linkBoundaryBefore, perText } from './scan.js';

// File extensions that are also top-level domains would turn "readme.md" or
// "views.py" into links; Zulip leaves them out.
const TLD_FALSE_POSITIVES = new Set(['java', 'md', 'mov', 'py', 'zip']);
const TLDS: ReadonlySet<string> = new Set(
  (createRequire(import.meta.url)('tlds') as string[]).filter((tld) => !TLD_FALSE_POSITIVES.has(tld)),
);
const LONGEST_TLD = Math.max(...[...TLDS].map((t) => t.length));

/** Beyond this many characters a URL is not looked for (bounds work on hostile input). */
const MAX_URL_LENGTH = 4096;
const MAX_PAREN_DEPTH = 7;

const TRAILING_PUNCTUATION = `!:;?),.'">`;

/** For each offset, where the run of trailing punctuation starting there ends. */
const punctuationRunEnds = perText((data) => {
  const ends = new Uint32Array(data.length + 1);
  ends[data.length] = data.length;
  for (let i = data.length - 1; i >= 0; i--) {
    ends[i] = TRAILING_PUNCTUATION.includes(data[i] as string) ? (ends[i + 1] as number) : i;
  }
  return ends;
});

/** `(?=[!:;?),.'">]*(?:\Z|\s))` at position i. */
function endsHere(data: string, i: number): boolean {
  const j = punctuationRunEnds(data)[i] as number;
  return j === data.length || isWhitespace(data[j]);
}

function isPathChar(c: string): boolean {
  return !isWhitespace(c) && c !== '(' && c !== ')' && c !== '"' && c !== '\u0002' && c !== '\u0003';
}

/** For each offset, the next character that is a parenthesis or may not appear in a path at all. */
const nextPathSpecial = perText((data) => {
  const next = new Uint32Array(data.length + 1);
  next[data.length] = data.length;
  for (let i = data.length - 1; i >= 0; i--) {
    const c = data[i] as string;
    next[i] = c === '(' || c === ')' || !isPathChar(c) ? i : (next[i + 1] as number);
  }
  return next;
});

/**
 * From a `/` at `start`, the shortest balanced path after which the URL may
 * end; undefined if none.
 */
function pathEnd(data: string, start: number, limit: number): number | undefined {
  // Fast path, which keeps long runs of URL-like text linear: with no
  // parenthesis or forbidden character before the first place the URL may
  // end, that place is the answer.
  const candidate = nextUrlEnd(data)[start + 1] as number;
  if (candidate <= (nextPathSpecial(data)[start + 1] as number)) return candidate <= limit ? candidate : undefined;
  let depth = 0;
  for (let i = start + 1; i <= limit; i++) {
    if (depth === 0 && endsHere(data, i)) return i;
    if (i === limit) return undefined;
    const c = data[i] as string;
    if (c === '(') {
      if (++depth > MAX_PAREN_DEPTH) return undefined;
    } else if (c === ')') {
      if (--depth < 0) return undefined;
    } else if (!isPathChar(c)) {
      return undefined;
    }
  }
  return undefined;
}

/** For each offset, the first offset at or after it where a URL may end. */
const nextUrlEnd = perText((data) => {
  const next = new Uint32Array(data.length + 2);
  next[data.length + 1] = data.length + 1;
  for (let i = data.length; i >= 0; i--) next[i] = endsHere(data, i) ? i : (next[i + 1] as number);
  return next;
});

/** After a host ending at `hostEnd`: a path or the end of the URL. */
function finishUrl(data: string, hostEnd: number, limit: number): number | undefined {
  if (data[hostEnd] === '/') {
    const end = pathEnd(data, hostEnd, limit);
    if (end !== undefined) return end;
  }
  return endsHere(data, hostEnd) ? hostEnd : undefined;
}

const isHostChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || '.:@-'.includes(c));
const isLabelChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || c === '-');

/** `https?://[\w.:@-]+?` then path/end, shortest host first. */
function matchWithScheme(data: string, start: number, limit: number): number | undefined {
  const m = /^https?:\/\//.exec(data.slice(start, start + 8));
  if (!m) return undefined;
  for (let i = start + m[0].length; i < limit && isHostChar(data[i]); i++) {
    const end = finishUrl(data, i + 1, limit);
    if (end !== undefined) return end;
  }
  return undefined;
}

/** `(?:[\w-]+\.)+TLD` then path/end, preferring the most labels and the longest TLD. */
function matchDomain(data: string, start: number, limit: number): number | undefined {
  const dots: number[] = [];
  let i = start;
  for (;;) {
    const labelStart = i;
    while (i < limit && isLabelChar(data[i])) i++;
    if (i === labelStart || data[i] !== '.') break;
    dots.push(i);
    i++;
  }
  for (let d = dots.length - 1; d >= 0; d--) {
    const tldStart = (dots[d] as number) + 1;
    for (let len = Math.min(LONGEST_TLD, limit - tldStart); len >= 1; len--) {
      if (!TLDS.has(data.slice(tldStart, tldStart + len))) continue;
      const end = finishUrl(data, tldStart + len, limit);
      if (end !== undefined) return end;
    }
  }
  return undefined;
}

/** `[\w.-]+@[\w.-]+\.\w+`, no path allowed. */
function matchEmail(data: string, start: number, limit: number): number | undefined {
  const isEmailChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || c === '.' || c === '-');
  let i = start;
  while (i < limit && isEmailChar(data[i])) i++;
  if (i === start || data[i] !== '@') return undefined;
  const domainStart = i + 1;
  let j = domainStart;
  while (j < limit && isEmailChar(data[j])) j++;
  // Try the last dot first (greedy), then shorter top-level parts.
  for (let dot = data.lastIndexOf('.', j - 1); dot > domainStart; dot = data.lastIndexOf('.', dot - 1)) {
    let end = dot + 1;
    while (end < j && isWordChar(data[end])) end++;
    for (let e = end; e > dot + 1; e--) if (endsHere(data, e)) return e;
  }
  return undefined;
}

export const autolink: InlinePattern = {
  name: 'autolink',
  excludedInside: ['a'],
  find(data, from, env) {
    for (let p = from; p < data.length; p++) {
      const c = data[p] as string;
      if (!(isWordChar(c) || c === '-' || c === '.') || !linkBoundaryBefore(data, p)) continue;
      const limit = Math.min(data.length, p + MAX_URL_LENGTH);
      const end = matchWithScheme(data, p, limit) ?? matchDomain(data, p, limit) ?? matchEmail(data, p, limit);
      if (end === undefined) continue;
      const url = data.slice(p, end);
      const href = sanitizeUrl(url);
      if (href === undefined) return { start: p, end, node: url };
      const a = atomicEl('a', url, { href: relativizeLocalLink(href, env.state.ctx.realmUrl) });
      return { start: p, end, node: a };
    }
    return undefined;
  },
};

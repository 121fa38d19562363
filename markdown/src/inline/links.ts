// [text](url) and [text](url "title"). The label is never parsed further
// (Zulip keeps it literal so a linkifier cannot split a link), an empty label
// shows the URL, and a URL with a forbidden scheme leaves the text as typed.

import { atomicEl } from '../tree.js';
import { relativizeLocalLink, sanitizeUrl } from '../urls.js';
import type { InlineEnv, InlinePattern } from './engine.js';
import { perText } from './scan.js';

/** For every `open` character, the index of its matching `close`, or -1. */
function matchPairs(data: string, open: string, close: string): Map<number, number> {
  const result = new Map<number, number>();
  const stack: number[] = [];
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === open) stack.push(i);
    else if (c === close && stack.length) result.set(stack.pop() as number, i);
  }
  for (const i of stack) result.set(i, -1);
  return result;
}

const brackets = perText((data) => matchPairs(data, '[', ']'));
const parens = perText((data) => matchPairs(data, '(', ')'));

const TITLED = /^(\S*?)\s+(["'])(.*)\2\s*$/s;

interface Target {
  href: string;
  title: string | undefined;
  end: number;
}

/** Parses `(url)`, `(<url>)` or `(url "title")` starting at `open`. */
function parseTarget(data: string, open: number): Target | undefined {
  const close = parens(data).get(open) ?? -1;
  if (close < 0) return undefined;
  const inner = data.slice(open + 1, close).trim();
  if (inner.startsWith('<')) {
    const m = /^<([^<>]*)>\s*(?:(["'])(.*)\2\s*)?$/s.exec(inner);
    if (m) return { href: (m[1] as string).trim(), title: m[3], end: close + 1 };
  }
  const titled = TITLED.exec(inner);
  if (titled) return { href: titled[1] as string, title: titled[3], end: close + 1 };
  return { href: inner, title: undefined, end: close + 1 };
}

function makeLink(env: InlineEnv, label: string, target: Target) {
  const href = sanitizeUrl(env.plainText(target.href).trim());
  if (href === undefined) return undefined;
  const local = relativizeLocalLink(href, env.state.ctx.realmUrl);
  const a = atomicEl('a', label.trim() ? label : local, { href: local });
  if (target.title !== undefined) a.set('title', target.title.replace(/\s+/g, ' ').trim());
  return a;
}

export const inlineLink: InlinePattern = {
  name: 'link',
  excludedInside: ['a'],
  find(data, from, env) {
    const pairs = brackets(data);
    for (let p = data.indexOf('[', from); p >= 0; p = data.indexOf('[', p + 1)) {
      // `![…](…)` is image syntax, which Zulip does not support.
      if (data[p - 1] === '!') continue;
      const close = pairs.get(p) ?? -1;
      if (close < 0 || data[close + 1] !== '(') continue;
      const target = parseTarget(data, close + 1);
      if (!target) continue;
      const a = makeLink(env, data.slice(p + 1, close), target);
      if (!a) continue;
      return { start: p, end: target.end, node: a };
    }
    return undefined;
  },
};

// Short inline patterns: $$inline math$$, <time:…>, character references,
// hard line breaks, and realm linkifiers.

import type { Linkifier } from '../context.js';
import { compileLinkifier } from '../linkifiers.js';
import { renderInlineMath } from '../math.js';
import { parseTimeValue } from '../time.js';
import { atomicEl, El } from '../tree.js';
import { relativizeLocalLink, sanitizeUrl } from '../urls.js';
import type { InlinePattern } from './engine.js';
import { isWordChar, perText } from './scan.js';

/** For every offset, the next "bad" offset for a math body: a newline or an unescaped `$`. */
const nextMathStop = perText((data) => {
  const next = new Int32Array(data.length + 1);
  next[data.length] = data.length;
  for (let i = data.length - 1; i >= 0; i--) {
    const stop = data[i] === '\n' || (data[i] === '$' && data[i - 1] !== '\\');
    next[i] = stop ? i : (next[i + 1] as number);
  }
  return next;
});

/**
 * `$$body$$`: not touching other dollars or word characters on the outside,
 * body on one line, not starting with `_` or `$`, and `\$` allowed inside.
 */
export const inlineMath: InlinePattern = {
  name: 'tex',
  find(data, from, env) {
    for (let p = data.indexOf('$$', from); p >= 0; p = data.indexOf('$$', p + 1)) {
      if (p > 0 && (data[p - 1] === '$' || isWordChar(data[p - 1]))) continue;
      const bodyStart = p + 2;
      const first = data[bodyStart];
      if (first === undefined || first === '\n' || first === '_' || first === '$') continue;
      // The first body character cannot escape the dollar after it.
      const stop =
        first === '\\' && data[bodyStart + 1] === '$' ? bodyStart + 1 : (nextMathStop(data)[bodyStart + 1] as number);
      for (const close of [stop, stop - 1]) {
        if (close <= bodyStart || data[close] !== '$' || data[close + 1] !== '$') continue;
        const after = data[close + 2];
        if (after === '$' || isWordChar(after)) continue;
        const body = data.slice(bodyStart, close);
        const html = renderInlineMath(body);
        const node = html !== undefined ? env.state.stashHtml(html) : atomicEl('span', `$$${body}$$`, { class: 'tex-error' });
        return { start: p, end: close + 2, node };
      }
    }
    return undefined;
  },
};

/** `<time:…>`: a <time> element, or an error span when the value cannot be read. */
export const timestamp: InlinePattern = {
  name: 'timestamp',
  find(data, from) {
    const p = data.indexOf('<time:', from);
    if (p < 0) return undefined;
    const close = data.indexOf('>', p + 6);
    if (close < 0) return undefined;
    const value = data.slice(p + 6, close);
    const iso = parseTimeValue(value);
    const node =
      iso === undefined
        ? atomicEl('span', `Invalid time format: ${value}`, { class: 'timestamp-error' })
        : atomicEl('time', value, { datetime: iso });
    return { start: p, end: close + 1, node };
  },
};

const ENTITY = /&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);/g;

/** A character reference such as `&amp;` is passed through as typed. */
export const entity: InlinePattern = {
  name: 'entity',
  find(data, from, env) {
    ENTITY.lastIndex = from;
    const m = ENTITY.exec(data);
    if (!m) return undefined;
    return { start: m.index, end: m.index + m[0].length, node: env.state.stashHtml(m[0]) };
  },
};

/** Every newline inside a paragraph is a hard line break. */
export const lineBreak: InlinePattern = {
  name: 'nl',
  find(data, from) {
    const p = data.indexOf('\n', from);
    return p < 0 ? undefined : { start: p, end: p + 1, node: new El('br') };
  },
};

const MAX_LINKIFIER_SEARCHES = 500;

/** One realm linkifier; its matches become links labelled with the matched text. */
export function linkifierPattern(linkifier: Linkifier): InlinePattern | undefined {
  const compiled = compileLinkifier(linkifier);
  if (!compiled) return undefined;
  let searchedText: string | undefined;
  let searches = 0;
  return {
    name: `linkifier-${linkifier.id}`,
    excludedInside: ['a'],
    find(data, from, env) {
      // Each RE2 search costs time proportional to the text, so a text with
      // absurdly many matches stops being linkified after a while.
      if (data !== searchedText) {
        searchedText = data;
        searches = 0;
      }
      if (++searches > MAX_LINKIFIER_SEARCHES) return undefined;
      const m = compiled.find(data, from);
      if (!m) return undefined;
      const href = sanitizeUrl(m.url);
      if (href === undefined) return { start: m.start, end: m.end, node: null };
      const a = atomicEl('a', m.text, { href: relativizeLocalLink(href, env.state.ctx.realmUrl) });
      return { start: m.start, end: m.end, node: a };
    },
  };
}

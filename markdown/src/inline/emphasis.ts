// ***strong emphasis***, **strong**, *emphasis* and ~~strikethrough~~.
// Zulip has no underscore emphasis (snake_case_names stay intact), and the
// single-star forms may not span `*`, `^` or a newline nor hug whitespace.

import { El } from '../tree.js';
import type { InlinePattern } from './engine.js';
import { isWhitespace, NextIndex, perText } from './scan.js';

const nextStar = perText((data) => new NextIndex(data, '*'));
const nextCaret = perText((data) => new NextIndex(data, '^'));
const nextNewline = perText((data) => new NextIndex(data, '\n'));
const nextDoubleStar = perText((data) => new NextIndex(data, '**'));
const nextTilde = perText((data) => new NextIndex(data, '~'));

/** End of a `[^*^\n]+` run starting at i (the first `*`, `^` or newline). */
function plainRunEnd(data: string, i: number): number {
  const candidates = [nextStar(data).from(i), nextCaret(data).from(i), nextNewline(data).from(i)];
  let end = data.length;
  for (const c of candidates) if (c >= 0 && c < end) end = c;
  return end;
}

/**
 * `(D)(?!\s)([^*^\n]+)(?<!\s)D` where D is `*` or `***`: the text runs to the
 * next star, which must begin the closing delimiter.
 */
function delimitedBy(delimiter: string, make: (text: string) => El): InlinePattern {
  const width = delimiter.length;
  return {
    name: width === 3 ? 'strong_em' : 'emphasis',
    find(data, from) {
      for (let p = data.indexOf(delimiter, from); p >= 0; p = data.indexOf(delimiter, p + 1)) {
        const textStart = p + width;
        if (textStart >= data.length || isWhitespace(data[textStart])) continue;
        const textEnd = plainRunEnd(data, textStart);
        if (textEnd === textStart || isWhitespace(data[textEnd - 1])) continue;
        if (!data.startsWith(delimiter, textEnd)) continue;
        return { start: p, end: textEnd + width, node: make(data.slice(textStart, textEnd)) };
      }
      return undefined;
    },
  };
}

export const strongEmphasis = delimitedBy('***', (text) => {
  const strong = new El('strong');
  strong.sub('em').text = text;
  return strong;
});

export const emphasis = delimitedBy('*', (text) => {
  const em = new El('em');
  em.text = text;
  return em;
});

/** `**text**`: any text (at least one character) up to the next `**` on the same line. */
export const strong: InlinePattern = {
  name: 'strong',
  find(data, from) {
    for (let p = data.indexOf('**', from); p >= 0; p = data.indexOf('**', p + 1)) {
      const close = nextDoubleStar(data).from(p + 3);
      if (close < 0) return undefined;
      const newline = nextNewline(data).from(p + 2);
      if (newline >= 0 && newline < close) continue;
      const el = new El('strong');
      el.text = data.slice(p + 2, close);
      return { start: p, end: close + 2, node: el };
    }
    return undefined;
  },
};

/** `~~text~~`, not part of a longer run of tildes. */
export const strikethrough: InlinePattern = {
  name: 'del',
  find(data, from) {
    for (let p = data.indexOf('~~', from); p >= 0; p = data.indexOf('~~', p + 1)) {
      if (data[p - 1] === '~') continue;
      const close = nextTilde(data).from(p + 2);
      if (close < 0) return undefined;
      if (close === p + 2) continue;
      const newline = nextNewline(data).from(p + 2);
      if (newline >= 0 && newline < close) continue;
      if (data[close + 1] !== '~' || data[close + 2] === '~') continue;
      const el = new El('del');
      el.text = data.slice(p + 2, close);
      return { start: p, end: close + 2, node: el };
    }
    return undefined;
  },
};

/**
 * A lone `*` or `_` between spaces (or at an end) is protected as plain text,
 * so that nothing after this pattern treats it as markup.
 */
export const loneStar: InlinePattern = {
  name: 'not_strong',
  find(data, from) {
    const lastIndex = data.endsWith('\n') ? data.length - 1 : data.length;
    for (let p = from; p < data.length; p++) {
      const atStart = p === 0 && (data[0] === '*' || data[0] === '_');
      const afterSpace = data[p] === ' ' && (data[p + 1] === '*' || data[p + 1] === '_');
      if (!atStart && !afterSpace) continue;
      const after = atStart ? 1 : p + 2;
      if (data[after] === ' ' || after === data.length || after === lastIndex) {
        const end = data[after] === ' ' ? after + 1 : after;
        return { start: p, end, node: data.slice(p, end) };
      }
    }
    return undefined;
  },
};

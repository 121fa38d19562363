// `inline code`. A span opens with a run of N backticks and closes at the next
// run of exactly N; spaces inside are kept as typed (Zulip does not trim them).
// An opener may be part of a longer run (```x`` is `` ` `` + code "`x"), and a
// backslash escapes the backtick right after it.

import { atomicEl } from '../tree.js';
import type { InlinePattern } from './engine.js';
import { perText } from './scan.js';

interface RunIndex {
  /** For each run length, the start offsets of maximal backtick runs of that length, ascending. */
  byLength: Map<number, number[]>;
  /** Run lengths present, descending. */
  lengths: number[];
}

const runIndex = perText((data): RunIndex => {
  const byLength = new Map<number, number[]>();
  for (let i = data.indexOf('`'); i >= 0; ) {
    let j = i;
    while (data[j] === '`') j++;
    const list = byLength.get(j - i);
    if (list) list.push(i);
    else byLength.set(j - i, [i]);
    i = data.indexOf('`', j);
  }
  return { byLength, lengths: [...byLength.keys()].sort((a, b) => b - a) };
});

function firstAtOrAfter(sorted: readonly number[], min: number): number | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < min) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo];
}

export const codeSpan: InlinePattern = {
  name: 'backtick',
  find(data, from) {
    const index = runIndex(data);
    for (let runStart = data.indexOf('`', from); runStart >= 0; ) {
      let runEnd = runStart;
      while (data[runEnd] === '`') runEnd++;
      let backslashes = 0;
      while (data[runStart - backslashes - 1] === '\\') backslashes++;
      const slashStart = runStart - backslashes;
      if (backslashes > 0 && backslashes % 2 === 0 && slashStart >= from) {
        // Pairs of backslashes before a backtick stand for one backslash each.
        return { start: slashStart, end: runStart, node: '\\'.repeat(backslashes / 2) };
      }
      // The first backtick is escaped by an odd backslash; later ones may still open.
      const firstOpener = Math.max(backslashes % 2 === 1 ? runStart + 1 : runStart, from);
      for (let p = firstOpener; p < runEnd; p++) {
        for (const n of index.lengths) {
          if (n > runEnd - p) continue;
          const close = firstAtOrAfter(index.byLength.get(n) as number[], p + n + 1);
          if (close !== undefined) {
            const code = atomicEl('code', data.slice(p + n, close));
            code.escapeFully = true;
            return { start: p, end: close + n, node: code };
          }
        }
      }
      runStart = data.indexOf('`', runEnd);
    }
    return undefined;
  },
};

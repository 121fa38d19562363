// Zulip lets a list start right under a line of text ("Steps:\n* one"), which
// plain Markdown would read as one paragraph. We insert the blank line that
// separates them, and likewise between a bulleted and a numbered list that
// touch. Lines inside (non-quote) fenced code are left alone.

import { parseFenceLine } from './fence-line.js';

const LIST_ITEM = /^ *([*+-]|\d\.) +/;

interface OpenFence {
  fence: string;
  isCode: boolean;
}

export function separateHangingLists(lines: readonly string[]): string[] {
  const out: string[] = [];
  const open: OpenFence[] = [];
  let inCode = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    out.push(line);
    if (i === lines.length - 1) break;
    const fence = parseFenceLine(line);
    if (fence) {
      const top = open[open.length - 1];
      if (!fence.lang && top !== undefined && top.fence === fence.fence) open.pop();
      else open.push({ fence: fence.fence, isCode: fence.lang !== 'quote' && fence.lang !== 'quoted' });
      inCode = open.some((f) => f.isCode);
    }
    if (inCode || line === '') continue;
    const current = LIST_ITEM.exec(line);
    const next = LIST_ITEM.exec(lines[i + 1] as string);
    if (!next) continue;
    const bulletNow = current ? (current[1] as string).length === 1 : undefined;
    const bulletNext = (next[1] as string).length === 1;
    if (!current || bulletNow !== bulletNext) out.push('');
  }
  return out;
}

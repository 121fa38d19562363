// `# Heading` … `###### Heading`. Zulip requires whitespace after the hashes
// (`#hashtag` stays text) and has no underlined (setext) headings.

import { El } from '../tree.js';
import type { BlockProcessor } from './parser.js';

interface HeadingMatch {
  start: number;
  end: number;
  level: number;
  text: string;
}

function isSpace(c: string | undefined): boolean {
  return c !== undefined && /\s/.test(c);
}

/** Finds the first line that is a heading; `start`/`end` delimit what it consumes. */
function findHeading(block: string): HeadingMatch | undefined {
  let lineStart = 0;
  while (lineStart <= block.length) {
    const consumedFrom = lineStart === 0 ? 0 : lineStart - 1;
    let i = lineStart;
    while (block[i] === '#' && i - lineStart < 7) i++;
    const level = i - lineStart;
    if (level >= 1 && level <= 6 && isSpace(block[i])) {
      const headerStart = i + 1;
      const nl = block.indexOf('\n', headerStart);
      const lineEnd = nl < 0 ? block.length : nl;
      // Closing hashes are dropped; a backslash pair is one unit and cannot end the text.
      let trailing = lineEnd;
      while (trailing > headerStart && block[trailing - 1] === '#') trailing--;
      let j = headerStart;
      let ok = true;
      while (j < trailing) {
        if (block[j] === '\\') {
          if (j + 1 >= lineEnd) {
            ok = false;
            break;
          }
          j += 2;
        } else {
          j++;
        }
      }
      if (ok) {
        return {
          start: consumedFrom,
          end: nl < 0 ? block.length : nl + 1,
          level,
          text: block.slice(headerStart, j).trim(),
        };
      }
    }
    const next = block.indexOf('\n', lineStart);
    if (next < 0) break;
    lineStart = next + 1;
  }
  return undefined;
}

export const hashHeading: BlockProcessor = {
  name: 'hashheader',
  test: (_parser, _parent, block) => block.includes('#') && findHeading(block) !== undefined,
  run(parser, parent, blocks) {
    const block = blocks.shift();
    const m = findHeading(block) as HeadingMatch;
    const before = block.slice(0, m.start);
    const after = block.slice(m.end);
    if (before) parser.parseBlocks(parent, [before]);
    const h = parent.append(new El(`h${m.level}`));
    h.text = m.text;
    if (after) blocks.unshift(after);
    return true;
  },
};

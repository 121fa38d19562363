// `> quoted` blocks. Unlike plain Markdown, two quotes separated by a blank
// line stay two quotes, a block of bare `>` lines is not a quote, and mentions
// inside a quote are made silent (quoting someone must not notify them again).

import { El } from '../tree.js';
import type { BlockProcessor } from './parser.js';

const QUOTE_LINE = /^ {0,3}> ?(.*)/;
const EMPTY_QUOTE_LINE = /^ {0,3}>\s*$/;
const USER_MENTION = /(?<![^\s'"({[/<])@_?\*\*([^*]+)\*\*/g;
const GROUP_MENTION = /(?<![^\s'"({[/<])@_?\*([^*]+)\*/g;

/** Offset where the quote starts (at the newline before its first line), if any. */
function findQuoteStart(block: string): number | undefined {
  const lines = block.split('\n');
  // A quote line only starts a quote if something other than bare `>` follows.
  let contentFollows = false;
  let start: number | undefined;
  let offset = block.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    offset -= line.length;
    if (!EMPTY_QUOTE_LINE.test(line)) contentFollows = true;
    if (contentFollows && /^ {0,3}>/.test(line)) start = i === 0 ? 0 : offset - 1;
    offset -= 1;
  }
  return start;
}

export function silenceMentions(line: string): string {
  if (!line.includes('@')) return line;
  return line.replace(USER_MENTION, '@_**$1**').replace(GROUP_MENTION, '@_*$1*');
}

function cleanQuoteLine(line: string): string {
  const silenced = silenceMentions(line);
  if (silenced.trim() === '>') return '';
  const m = QUOTE_LINE.exec(silenced);
  return m ? (m[1] as string) : silenced;
}

export const blockQuote: BlockProcessor = {
  name: 'quote',
  test: (parser, _parent, block) => parser.canNest() && block.includes('>') && findQuoteStart(block) !== undefined,
  run(parser, parent, blocks) {
    let block = blocks.shift();
    const start = findQuoteStart(block) as number;
    parser.parseBlocks(parent, [block.slice(0, start)]);
    block = block.slice(start).split('\n').map(cleanQuoteLine).join('\n');
    const quote = parent.append(new El('blockquote'));
    parser.setState('blockquote');
    parser.parseChunk(quote, block);
    parser.resetState();
    return true;
  },
};

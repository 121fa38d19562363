// Input normalisation before any parsing: line endings, tabs, blank lines.

import { ETX, STX } from '../state.js';

const TAB_WIDTH = 4;

/** Returns the message as lines, normalised the way the block parser expects. */
export function normalizeSource(content: string): string[] {
  let source = content.replaceAll(STX, '').replaceAll(ETX, '');
  source = `${source.replace(/\r\n?/g, '\n')}\n\n`;
  if (source.includes('\t')) source = expandTabs(source);
  // A line holding only spaces counts as blank (it separates blocks).
  source = source.replace(/(?<=\n) +\n/g, '\n');
  return source.split('\n');
}

function expandTabs(text: string): string {
  let out = '';
  let column = 0;
  for (const c of text) {
    if (c === '\t') {
      const width = TAB_WIDTH - (column % TAB_WIDTH);
      out += ' '.repeat(width);
      column += width;
    } else {
      out += c;
      column = c === '\n' ? 0 : column + 1;
    }
  }
  return out;
}

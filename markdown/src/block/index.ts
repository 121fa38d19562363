// Block-level structure of a message, in Zulip's processor order.
// Zulip has no horizontal rules, no setext headings and no reference links.

import type { RenderState } from '../state.js';
import { El } from '../tree.js';
import { hashHeading } from './heading.js';
import { highlightIndentedCode, indentedCode } from './indented-code.js';
import { bulletedList, listIndent, orderedList } from './lists.js';
import { emptyBlock, paragraph } from './paragraph.js';
import { BlockParser } from './parser.js';
import { blockQuote } from './quote.js';
import { table } from './table.js';

const PROCESSORS = [emptyBlock, listIndent, indentedCode, hashHeading, table, orderedList, bulletedList, blockQuote, paragraph];

/** Parses the (preprocessed) message text into a tree under a wrapper root. */
export function parseBlocks(text: string, state: RenderState): El {
  const root = new El('div');
  new BlockParser(PROCESSORS, state).parseChunk(root, text);
  highlightIndentedCode(root, state);
  return root;
}

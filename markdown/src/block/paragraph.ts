// Blank blocks and plain paragraphs (the processors of last resort).

import { El } from '../tree.js';
import type { BlockProcessor } from './parser.js';

/** A blank line ends a paragraph; inside an indented code block it is kept. */
export const emptyBlock: BlockProcessor = {
  name: 'empty',
  test: (_parser, _parent, block) => block === '' || block.startsWith('\n'),
  run(_parser, parent, blocks) {
    const block = blocks.shift();
    let filler = '\n\n';
    if (block) {
      filler = '\n';
      const rest = block.slice(1);
      if (rest) blocks.unshift(rest);
    }
    const sibling = parent.last();
    const code = sibling?.tag === 'pre' ? sibling.children[0] : undefined;
    if (code?.tag === 'code') code.text += filler;
    return true;
  },
};

export const paragraph: BlockProcessor = {
  name: 'paragraph',
  test: () => true,
  run(parser, parent, blocks) {
    const block = blocks.shift();
    if (!block.trim()) return true;
    if (parser.isState('list')) {
      // Items of a tight list hold their text directly, without <p>.
      const sibling = parent.last();
      if (sibling) sibling.tail = sibling.tail ? `${sibling.tail}\n${block}` : `\n${block}`;
      else parent.text = parent.text ? `${parent.text}\n${block}` : block.trimStart();
      return true;
    }
    const p = parent.append(new El('p'));
    p.text = block.trimStart();
    return true;
  },
};

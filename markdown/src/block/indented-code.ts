// Code indented by four spaces. The <pre><code> built here becomes a
// highlighted block in `highlightIndentedCode`, after block parsing, because
// later blocks (blank lines, more indented lines) may still extend it.

import { formatCodeBlock } from '../highlight/code-block.js';
import type { RenderState } from '../state.js';
import { atomicEl, El } from '../tree.js';
import type { BlockProcessor } from './parser.js';

const CODE_INDENT = 4;

/** Removes one indentation level from the leading indented lines; returns them and the rest. */
export function detab(text: string, width: number): [string, string] {
  const lines = text.split('\n');
  const taken: string[] = [];
  const indent = ' '.repeat(width);
  for (const line of lines) {
    if (line.startsWith(indent)) taken.push(line.slice(width));
    else if (!line.trim()) taken.push('');
    else break;
  }
  return [taken.join('\n'), lines.slice(taken.length).join('\n')];
}

export const indentedCode: BlockProcessor = {
  name: 'code',
  test: (_parser, _parent, block) => block.startsWith(' '.repeat(CODE_INDENT)),
  run(_parser, parent, blocks) {
    const block = blocks.shift();
    const sibling = parent.last();
    const previousCode = sibling?.tag === 'pre' ? sibling.children[0] : undefined;
    const [code, rest] = detab(block, CODE_INDENT);
    if (previousCode?.tag === 'code') {
      // A blank line does not end an indented code block.
      previousCode.text = `${previousCode.text}\n${code.trimEnd()}\n`;
    } else {
      const pre = parent.append(new El('pre'));
      pre.append(atomicEl('code', `${code.trimEnd()}\n`));
    }
    if (rest) blocks.unshift(rest);
    return true;
  },
};

/** Replaces every <pre><code> left by the block parser with a stashed, highlighted block. */
export function highlightIndentedCode(root: El, state: RenderState): void {
  const stack: El[] = [root];
  while (stack.length) {
    const el = stack.pop() as El;
    for (let i = 0; i < el.children.length; i++) {
      const child = el.children[i] as El;
      const code = child.tag === 'pre' ? child.children[0] : undefined;
      if (code?.tag === 'code') {
        const p = new El('p');
        // The highlighter's own output ends in a newline here (fenced blocks trim it).
        p.text = state.stashHtml(`${formatCodeBlock(code.text, undefined)}\n`);
        p.tail = child.tail;
        el.children[i] = p;
      } else {
        stack.push(child);
      }
    }
  }
}

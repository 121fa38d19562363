// Bulleted and numbered lists. Zulip nests lists by two spaces (code blocks
// need four), keeps the two kinds apart ("sane lists"), honours the first
// number of a numbered list, and renders items of a tight list without <p>.

import { El } from '../tree.js';
import type { BlockParser, BlockProcessor } from './parser.js';

const LIST_INDENT = 2;
const ITEM_TAGS = new Set(['li']);
const LIST_TAGS = new Set(['ul', 'ol']);

interface ListKind {
  tag: 'ul' | 'ol';
  /** The first line of the block starts an item of this kind. */
  start: RegExp;
  /** A line starting an item of this kind (group 1: marker, group 2: text). */
  item: RegExp;
}

// At most one leading space (LIST_INDENT - 1); two or more means nesting.
const ORDERED: ListKind = { tag: 'ol', start: /^ ?\d+\. +/, item: /^ ?(\d+\.) +(.*)/ };
const BULLETED: ListKind = { tag: 'ul', start: /^ ?[*+-] +/, item: /^ ?([*+-]) +(.*)/ };
/** An item of either kind, indented one level: it belongs to a nested list. */
const NESTED_ITEM = /^ {2,3}(?:\d+\.|[*+-]) +/;

function splitItems(kind: ListKind, block: string): { items: string[]; startNumber: string } {
  const items: string[] = [];
  let startNumber = '1';
  for (const line of block.split('\n')) {
    const m = kind.item.exec(line);
    if (m) {
      if (items.length === 0 && kind.tag === 'ol') startNumber = (m[1] as string).slice(0, -1);
      items.push(m[2] as string);
    } else if (NESTED_ITEM.test(line)) {
      const last = items[items.length - 1] as string;
      if (last.startsWith(' '.repeat(LIST_INDENT))) items[items.length - 1] = `${last}\n${line}`;
      else items.push(line);
    } else {
      items[items.length - 1] = `${items[items.length - 1]}\n${line}`;
    }
  }
  return { items, startNumber };
}

function listProcessor(kind: ListKind): BlockProcessor {
  return {
    name: kind.tag === 'ol' ? 'olist' : 'ulist',
    test: (parser, _parent, block) => parser.canNest() && kind.start.test(block),
    run(parser, parent, blocks) {
      const { items, startNumber } = splitItems(kind, blocks.shift());
      const sibling = parent.last();
      let list: El;
      if (sibling?.tag === kind.tag) {
        // The list goes on after a blank line: it becomes a loose list.
        list = sibling;
        const lastItem = list.last() as El;
        if (lastItem.text) {
          const p = new El('p');
          p.text = lastItem.text;
          lastItem.text = '';
          lastItem.insert(0, p);
        }
        const lastChild = lastItem.last();
        if (lastChild?.tail) {
          const p = lastItem.append(new El('p'));
          p.text = lastChild.tail.trimStart();
          lastChild.tail = '';
        }
        const li = list.append(new El('li'));
        parser.setState('looselist');
        parser.parseBlocks(li, [items.shift() as string]);
        parser.resetState();
      } else if (LIST_TAGS.has(parent.tag)) {
        list = parent;
      } else {
        list = parent.append(new El(kind.tag));
        if (kind.tag === 'ol' && startNumber !== '1') list.set('start', startNumber);
      }
      parser.setState('list');
      for (const item of items) {
        if (item.startsWith(' '.repeat(LIST_INDENT))) parser.parseBlocks(list.last() as El, [item]);
        else parser.parseBlocks(list.append(new El('li')), [item]);
      }
      parser.resetState();
      return true;
    },
  };
}

export const orderedList = listProcessor(ORDERED);
export const bulletedList = listProcessor(BULLETED);

function looseDetab(text: string, level: number): string {
  const indent = ' '.repeat(LIST_INDENT * level);
  return text
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    .join('\n');
}

/** Finds the element an indented block belongs to, walking down `level`s of lists. */
function findIndentParent(parser: BlockParser, parent: El, block: string): { level: number; target: El } {
  const m = /^(?: {2})+/.exec(block);
  const indentLevel = m ? m[0].length / LIST_INDENT : 0;
  let level = parser.isState('list') ? 1 : 0;
  let target = parent;
  while (indentLevel > level) {
    const child = target.last();
    if (child && (LIST_TAGS.has(child.tag) || ITEM_TAGS.has(child.tag))) {
      if (LIST_TAGS.has(child.tag)) level++;
      target = child;
    } else {
      break;
    }
  }
  return { level, target };
}

/** A block indented under a list item continues that item (after a blank line). */
export const listIndent: BlockProcessor = {
  name: 'indent',
  test(parser, parent, block) {
    if (!block.startsWith(' '.repeat(LIST_INDENT)) || parser.isState('detabbed') || !parser.canNest()) return false;
    if (ITEM_TAGS.has(parent.tag)) return true;
    const last = parent.last();
    return last !== undefined && LIST_TAGS.has(last.tag);
  },
  run(parser, parent, blocks) {
    const raw = blocks.shift();
    const { level, target } = findIndentParent(parser, parent, raw);
    const block = looseDetab(raw, level);
    parser.setState('detabbed');
    if (ITEM_TAGS.has(parent.tag)) {
      const last = parent.last();
      if (last && LIST_TAGS.has(last.tag)) parser.parseBlocks(last, [block]);
      else parser.parseBlocks(parent, [block]);
    } else if (ITEM_TAGS.has(target.tag)) {
      parser.parseBlocks(target, [block]);
    } else if (target.last() && ITEM_TAGS.has((target.last() as El).tag)) {
      const item = target.last() as El;
      if (item.text) {
        const p = new El('p');
        p.text = item.text;
        item.text = '';
        item.insert(0, p);
      }
      parser.parseChunk(item, block);
    } else {
      parser.parseBlocks(target.append(new El('li')), [block]);
    }
    parser.resetState();
    return true;
  },
};

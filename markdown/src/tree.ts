// A tiny element tree with "text" (before the first child) and "tail" (after
// the element, inside its parent). Zulip's dialect was defined on such a tree,
// and several of its rules (tight list items, where a preview is inserted, which
// newlines the output carries) are only expressible in these terms.

import { escapeAttribute, escapeMinimal, escapeText } from './escape.js';

export class El {
  readonly tag: string;
  readonly attrs: Array<[string, string]> = [];
  text = '';
  tail = '';
  /** When set, inline patterns never run over `text` (code, link labels, mentions…). */
  atomicText = false;
  /** Code text: every `&` is escaped, even one that starts a character reference. */
  escapeFully = false;
  children: El[] = [];

  constructor(tag: string, attrs?: Record<string, string>) {
    this.tag = tag;
    if (attrs) for (const [k, v] of Object.entries(attrs)) this.attrs.push([k, v]);
  }

  get(name: string): string | undefined {
    return this.attrs.find(([k]) => k === name)?.[1];
  }

  set(name: string, value: string): void {
    const existing = this.attrs.find(([k]) => k === name);
    if (existing) existing[1] = value;
    else this.attrs.push([name, value]);
  }

  append(child: El): El {
    this.children.push(child);
    return child;
  }

  /** Creates a child element at the end, like ElementTree's SubElement. */
  sub(tag: string, attrs?: Record<string, string>): El {
    return this.append(new El(tag, attrs));
  }

  insert(index: number, child: El): void {
    this.children.splice(index, 0, child);
  }

  remove(child: El): void {
    const i = this.children.indexOf(child);
    if (i >= 0) this.children.splice(i, 1);
  }

  last(): El | undefined {
    return this.children[this.children.length - 1];
  }
}

/** Creates an element whose text is final (never inline-processed). */
export function atomicEl(tag: string, text: string, attrs?: Record<string, string>): El {
  const el = new El(tag, attrs);
  el.text = text;
  el.atomicText = true;
  return el;
}

const BLOCK_TAGS = new Set([
  'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'header', 'hgroup', 'hr', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'section',
  'table', 'ul', 'canvas', 'colgroup', 'dd', 'body', 'dt', 'group', 'html', 'iframe',
  'li', 'legend', 'math', 'map', 'noscript', 'output', 'object', 'option', 'progress',
  'script', 'style', 'summary', 'tbody', 'td', 'textarea', 'tfoot', 'th', 'thead',
  'tr', 'video',
]);

export function isBlockTag(tag: string): boolean {
  return BLOCK_TAGS.has(tag);
}

const VOID_TAGS = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'wbr']);

/**
 * Puts a newline after every block element and before every `<br>` tail: the
 * whitespace layout Zulip's HTML has (`<ul>\n<li>…</li>\n</ul>`).
 */
export function prettify(root: El): void {
  prettifyBlock(root);
  for (const br of iterate(root, 'br')) br.tail = br.tail.trim() ? `\n${br.tail}` : '\n';
}

function prettifyBlock(el: El): void {
  if (isBlockTag(el.tag) && el.tag !== 'code' && el.tag !== 'pre') {
    const first = el.children[0];
    if (!el.text.trim() && first && isBlockTag(first.tag)) el.text = '\n';
    for (const child of el.children) if (isBlockTag(child.tag)) prettifyBlock(child);
  }
  if (!el.tail.trim()) el.tail = '\n';
}

export function* iterate(root: El, tag?: string): Generator<El> {
  const stack: El[] = [root];
  while (stack.length) {
    const el = stack.pop() as El;
    if (tag === undefined || el.tag === tag) yield el;
    for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i] as El);
  }
}

/** Serializes the children of `root` (the root itself is a wrapper and not emitted). */
export function serializeChildren(root: El): string {
  const out: string[] = [];
  if (root.text) out.push(escapeText(root.text));
  for (const child of root.children) serializeInto(child, out);
  return out.join('');
}

function serializeInto(el: El, out: string[]): void {
  // An explicit stack keeps deeply nested input from overflowing the call stack.
  type Frame = { el: El; next: number };
  const stack: Frame[] = [];
  const open = (e: El): void => {
    out.push('<', e.tag);
    // Zulip's serializer emits attributes in lexical order; clients compare HTML.
    const attrs = [...e.attrs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [k, v] of attrs) out.push(' ', k, '="', escapeAttribute(v), '"');
    out.push('>');
    if (VOID_TAGS.has(e.tag)) {
      if (e.tail) out.push(escapeText(e.tail));
      return;
    }
    if (e.text) out.push(e.escapeFully ? escapeMinimal(e.text) : escapeText(e.text));
    stack.push({ el: e, next: 0 });
  };
  open(el);
  while (stack.length) {
    const top = stack[stack.length - 1] as Frame;
    if (top.next < top.el.children.length) {
      open(top.el.children[top.next++] as El);
      continue;
    }
    stack.pop();
    out.push('</', top.el.tag, '>');
    if (top.el.tail) out.push(escapeText(top.el.tail));
  }
}

// Inline markup is found by a list of patterns applied one after another, in
// priority order, over the text of each element. A match is replaced by a
// placeholder standing for the element it produced, so later (lower-priority)
// patterns cannot see into it; the text inside a new element is then processed
// by the patterns after the one that made it. This ordering is what decides,
// for example, that a link inside **bold** works but an emoji name split by
// emphasis does not, so it follows Zulip's dialect closely.
//
// Every pattern scans the text left to right once (finding the leftmost match
// from a position, then continuing after it), and patterns are written so that
// a scan is linear in the text length.

import type { RenderState } from '../state.js';
import { ETX, STX } from '../state.js';
import { El } from '../tree.js';

const NODE_PREFIX = `${STX}k`;
const NODE_PLACEHOLDER = /\u0002k(\d+)\u0003/g;

export interface InlineMatch {
  start: number;
  end: number;
  /**
   * The element to insert; a string to insert as opaque text (a stashed HTML
   * placeholder, or text later patterns must not touch); null when the
   * pattern declines, in which case scanning continues at `end`.
   */
  node: El | string | null;
}

export interface InlinePattern {
  readonly name: string;
  /** Tags inside which this pattern never applies (no links inside links). */
  readonly excludedInside?: readonly string[];
  /** The leftmost match starting at or after `from`, if any. */
  find(data: string, from: number, env: InlineEnv): InlineMatch | undefined;
}

export class InlineEnv {
  private readonly stashed: Array<El | string> = [];
  ancestors: string[] = [];

  constructor(
    readonly state: RenderState,
    readonly patterns: readonly InlinePattern[],
  ) {}

  stash(node: El | string): string {
    this.stashed.push(node);
    return `${NODE_PREFIX}${this.stashed.length - 1}${ETX}`;
  }

  stashedNode(id: number): El | string | undefined {
    return this.stashed[id];
  }

  /** The plain text a placeholder-bearing string stands for (used for link targets). */
  plainText(data: string): string {
    return data.replace(NODE_PLACEHOLDER, (_m, id: string) => {
      const node = this.stashed[Number(id)];
      if (node === undefined) return '';
      return typeof node === 'string' ? node : textContent(node, this);
    });
  }
}

function textContent(el: El, env: InlineEnv): string {
  let out = env.plainText(el.text);
  for (const child of el.children) out += textContent(child, env) + env.plainText(child.tail);
  return out;
}

/** Runs the patterns from `startIndex` on over `data`; returns it with placeholders. */
export function handleInline(data: string, startIndex: number, env: InlineEnv): string {
  let text = data;
  for (let i = startIndex; i < env.patterns.length; i++) {
    const pattern = env.patterns[i] as InlinePattern;
    if (pattern.excludedInside?.some((tag) => env.ancestors.includes(tag))) continue;
    text = applyPattern(pattern, i, text, env);
  }
  return text;
}

function applyPattern(pattern: InlinePattern, index: number, data: string, env: InlineEnv): string {
  const out: string[] = [];
  let copied = 0;
  let pos = 0;
  while (pos <= data.length) {
    const m = pattern.find(data, pos, env);
    if (!m) break;
    if (m.node === null) {
      pos = Math.max(m.end, pos + 1);
      continue;
    }
    let replacement: string;
    if (typeof m.node === 'string') {
      replacement = m.node.startsWith(STX) ? m.node : env.stash(m.node);
    } else {
      processNewElement(m.node, index, env);
      replacement = env.stash(m.node);
    }
    out.push(data.slice(copied, m.start), replacement);
    copied = m.end;
    pos = m.end > m.start ? m.end : m.end + 1;
  }
  if (copied === 0 && out.length === 0) return data;
  out.push(data.slice(copied));
  return out.join('');
}

/** Text inside a new element is processed by the lower-priority patterns only. */
function processNewElement(node: El, index: number, env: InlineEnv): void {
  if (node.atomicText) return;
  for (const child of [node, ...node.children]) {
    if (child.text && !child.atomicText) {
      env.ancestors.push(child.tag);
      child.text = handleInline(child.text, index + 1, env);
      env.ancestors.pop();
    }
    if (child.tail) child.tail = handleInline(child.tail, index, env);
  }
}

/**
 * Replaces placeholders in `data` by their elements: text before the first
 * goes to `parent.text` (or `parent.tail`), the rest into element tails.
 * Returns the elements, in order, for the caller to insert.
 */
function expandPlaceholders(data: string, parent: El, isText: boolean, env: InlineEnv): El[] {
  const result: El[] = [];
  const addText = (text: string): void => {
    if (!text) return;
    const last = result[result.length - 1];
    if (last) last.tail += text;
    else if (isText) parent.text += text;
    else parent.tail += text;
  };
  let pos = 0;
  NODE_PLACEHOLDER.lastIndex = 0;
  for (;;) {
    const start = data.indexOf(NODE_PREFIX, pos);
    if (start < 0) break;
    const end = data.indexOf(ETX, start);
    const id = Number(data.slice(start + NODE_PREFIX.length, end));
    const node = end > start ? env.stashedNode(id) : undefined;
    if (node === undefined) {
      addText(data.slice(pos, start + NODE_PREFIX.length));
      pos = start + NODE_PREFIX.length;
      continue;
    }
    addText(data.slice(pos, start));
    pos = end + 1;
    if (typeof node === 'string') {
      addText(node);
      continue;
    }
    for (const child of [node, ...node.children]) {
      if (child.tail.trim()) expandElementText(node, child, false, env);
      if (child.text.trim()) expandElementText(child, child, true, env);
    }
    result.push(node);
  }
  addText(data.slice(pos));
  return result;
}

function expandElementText(node: El, sub: El, isText: boolean, env: InlineEnv): void {
  const text = isText ? sub.text : sub.tail;
  if (isText) sub.text = '';
  else sub.tail = '';
  const children = expandPlaceholders(text, sub, isText, env);
  const at = !isText && node !== sub ? node.children.indexOf(sub) + 1 : 0;
  node.children.splice(at, 0, ...children);
}

/** Applies the inline patterns to every non-atomic text and tail in the tree. */
export function processInlineTree(root: El, env: InlineEnv): void {
  const stack: Array<[El, string[]]> = [[root, []]];
  while (stack.length) {
    const [current, ancestors] = stack.pop() as [El, string[]];
    const here = [...ancestors, current.tag];
    const insertQueue: Array<[El, El[]]> = [];
    // Live iteration: elements made from a tail are inserted after the child
    // being visited and get visited themselves.
    for (let i = 0; i < current.children.length; i++) {
      const child = current.children[i] as El;
      if (child.text && !child.atomicText) {
        env.ancestors = [...here, child.tag];
        const text = child.text;
        child.text = '';
        const made = expandPlaceholders(handleInline(text, 0, env), child, true, env);
        for (const el of made) stack.push([el, [...here, child.tag]]);
        insertQueue.push([child, made]);
      }
      if (child.tail) {
        env.ancestors = here;
        const tail = child.tail;
        child.tail = '';
        const holder = new El('d');
        const made = expandPlaceholders(handleInline(tail, 0, env), holder, false, env);
        child.tail = holder.tail;
        current.children.splice(i + 1, 0, ...made);
      }
      if (child.children.length) stack.push([child, here]);
    }
    for (const [el, made] of insertQueue) el.children.splice(0, 0, ...made);
  }
}

// Per-render mutable state: the stash of HTML we generated ourselves, and the
// facts (mentions, flags) collected while rendering.

import type { RenderContext } from './context.js';
import { isBlockTag } from './tree.js';

// Control characters delimit placeholders. They are stripped from user input
// first, so a user can never forge a placeholder and smuggle stashed HTML.
export const STX = '\u0002';
export const ETX = '\u0003';
const RAW_PREFIX = `${STX}w`;
const RAW_PLACEHOLDER = /\u0002w(\d+)\u0003/g;

export class RenderState {
  readonly ctx: RenderContext;
  private readonly rawHtml: string[] = [];
  readonly mentionedUserIds = new Set<number>();
  readonly mentionedGroupIds = new Set<number>();
  mentionsStreamWildcard = false;
  mentionsTopicWildcard = false;

  constructor(ctx: RenderContext) {
    this.ctx = ctx;
  }

  /** Stores HTML produced by the renderer itself; returns the placeholder that stands for it. */
  stashHtml(html: string): string {
    this.rawHtml.push(html);
    return `${RAW_PREFIX}${this.rawHtml.length - 1}${ETX}`;
  }

  /**
   * Puts stashed HTML back. A placeholder alone in a paragraph replaces the
   * whole paragraph when the HTML is itself a block (a code block is not put
   * inside `<p>`), as Zulip's output does.
   */
  restoreHtml(html: string): string {
    if (this.rawHtml.length === 0) return html;
    return html
      .replace(/<p>\u0002w(\d+)\u0003<\/p>/g, (whole, n: string) => {
        const stored = this.rawHtml[Number(n)];
        if (stored === undefined) return whole;
        return startsWithBlockTag(stored) ? stored : `<p>${stored}</p>`;
      })
      .replace(RAW_PLACEHOLDER, (_whole, n: string) => this.rawHtml[Number(n)] ?? '');
  }
}

function startsWithBlockTag(html: string): boolean {
  const m = /^<\/?([a-zA-Z][a-zA-Z0-9]*)/.exec(html);
  return m !== null && isBlockTag((m[1] as string).toLowerCase());
}

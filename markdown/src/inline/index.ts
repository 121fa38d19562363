// The inline patterns in Zulip's priority order. The order is the dialect:
// code first (nothing inside code is markup), then mentions, math and channel
// links, then links, linkifiers, emphasis, and emoji last.

import type { RenderState } from '../state.js';
import type { El } from '../tree.js';
import { autolink } from './autolink.js';
import { channelLink, channelMessageLink, channelTopicLink } from './channel-links.js';
import { codeSpan } from './code-span.js';
import { emoji, emoticon, unicodeEmoji } from './emoji-patterns.js';
import { emphasis, loneStar, strikethrough, strong, strongEmphasis } from './emphasis.js';
import { InlineEnv, type InlinePattern, processInlineTree } from './engine.js';
import { inlineLink } from './links.js';
import { groupMention, userMention } from './mentions.js';
import { entity, inlineMath, lineBreak, linkifierPattern, timestamp } from './small-patterns.js';

function patternsFor(state: RenderState): InlinePattern[] {
  const linkifiers = (state.ctx.linkifiers ?? [])
    .map(linkifierPattern)
    .filter((p): p is InlinePattern => p !== undefined);
  return [
    codeSpan,
    strongEmphasis,
    userMention,
    inlineMath,
    channelMessageLink,
    channelTopicLink,
    channelLink,
    timestamp,
    groupMention,
    inlineLink,
    autolink,
    ...linkifiers,
    entity,
    strong,
    emphasis,
    strikethrough,
    loneStar,
    emoji,
    ...(state.ctx.translateEmoticons ? [emoticon] : []),
    lineBreak,
    unicodeEmoji,
  ];
}

/** Turns the text of every block element into inline markup. */
export function renderInline(root: El, state: RenderState): void {
  processInlineTree(root, new InlineEnv(state, patternsFor(state)));
}

// @zc/markdown: renders message Markdown in Zulip's dialect to Zulip's HTML.
// Pure: everything the renderer needs from the world comes in the context.

import { findAlertWords } from './alert-words.js';
import { parseBlocks } from './block/index.js';
import type { RenderContext, RenderResult } from './context.js';
import { renderInline } from './inline/index.js';
import { autolink } from './inline/autolink.js';
import { compileLinkifier } from './linkifiers.js';
import { sanitizeUrl } from './urls.js';
import { expandFencedBlocks } from './preprocess/fenced-blocks.js';
import { separateHangingLists } from './preprocess/hanging-lists.js';
import { normalizeSource } from './preprocess/normalize.js';
import { processLinks } from './previews.js';
import { RenderState } from './state.js';
import { prettify, serializeChildren } from './tree.js';
import type { Linkifier } from './context.js';

export type {
  Linkifier,
  MentionGroup,
  MentionUser,
  RealmEmoji,
  RenderContext,
  RenderResult,
  StreamRef,
  UploadedImagePreview,
} from './context.js';
export { urlFormatStringToTemplate, validateLinkifier } from './linkifiers.js';
export { sanitizeUrl } from './urls.js';
export { emojiTables, type EmojiTables } from './emoji.js';
export { mayTranslateEmoticons } from './inline/emoji-patterns.js';

/**
 * Version of the rendering rules, stored with each message as
 * `rendered_content_version`: messages rendered by an older version may be
 * re-rendered. Zulip's own counter stood at 1 for years; we keep it.
 */
export const RENDERER_VERSION = 1;

/** Input longer than this is not rendered (Zulip's limit on message length is 10,000 characters). */
const MAX_CONTENT_LENGTH = 100_000;

/**
 * One line of ASCII words separated by single spaces, with at most `, ? ! '` for punctuation:
 * no rule of the dialect (blocks, inline syntax, autolinks, emoji, emoticons, mentions) reads
 * anything in it, so it renders as one paragraph of itself (test/fast-path.test.ts holds the
 * full renderer to that). Only a linkifier could match such text. Most chat lines look like
 * this, and the full pipeline cost a sender ~15 µs each for them.
 */
const PLAIN_LINE = /^[A-Za-z0-9,?!']+(?: [A-Za-z0-9,?!']+)*$/;

/** Renders a message. Never throws for any input; the HTML is safe to embed. */
export function render(content: string, ctx: RenderContext): RenderResult {
  if (!ctx.linkifiers?.length && content.length <= 1000 && PLAIN_LINE.test(content)) return plainResult(content, ctx);
  return renderFully(content, ctx);
}

/** What `renderFully` gives for a PLAIN_LINE `content` (with no linkifiers). */
function plainResult(content: string, ctx: RenderContext): RenderResult {
  return {
    html: `<p>${content}</p>`,
    mentioned_user_ids: [],
    mentioned_group_ids: [],
    wildcard_mention: null,
    mentions_stream_wildcard: false,
    mentions_topic_wildcard: false,
    has_link: false,
    has_image: false,
    has_attachment: false,
    attachment_path_ids: [],
    is_me_message: false,
    alert_words_found: ctx.alertWords?.length ? findAlertWords(content, ctx.alertWords) : [],
    links: [],
  };
}

/** The whole pipeline; exported for the tests that hold `render`'s fast path to it. */
export function renderFully(content: string, ctx: RenderContext): RenderResult {
  const state = new RenderState(ctx);
  const source = content.length > MAX_CONTENT_LENGTH ? content.slice(0, MAX_CONTENT_LENGTH) : content;
  let html = '';
  let facts = { links: [] as string[], hasImage: false, attachmentPathIds: [] as string[] };
  if (source.trim()) {
    const lines = expandFencedBlocks(separateHangingLists(normalizeSource(source)), state);
    const root = parseBlocks(lines.join('\n'), state);
    renderInline(root, state);
    prettify(root);
    facts = processLinks(root, state);
    html = state.restoreHtml(serializeChildren(root)).trim();
  }
  const wildcard = state.mentionsStreamWildcard ? 'stream' : state.mentionsTopicWildcard ? 'topic' : null;
  return {
    html,
    mentioned_user_ids: [...state.mentionedUserIds].sort((a, b) => a - b),
    mentioned_group_ids: [...state.mentionedGroupIds].sort((a, b) => a - b),
    wildcard_mention: wildcard,
    mentions_stream_wildcard: state.mentionsStreamWildcard,
    mentions_topic_wildcard: state.mentionsTopicWildcard,
    has_link: facts.links.length > 0,
    has_image: facts.hasImage,
    has_attachment: facts.attachmentPathIds.length > 0,
    attachment_path_ids: facts.attachmentPathIds,
    is_me_message: content.startsWith('/me '),
    alert_words_found: ctx.alertWords?.length ? findAlertWords(source, ctx.alertWords) : [],
    links: facts.links,
  };
}

export interface TopicLink {
  text: string;
  url: string;
}

/**
 * Links found in a topic name: linkifier matches (earlier linkifiers win
 * overlaps) and bare URLs, in the order they appear.
 */
export function renderTopicLinks(topic: string, linkifiers: readonly Linkifier[]): TopicLink[] {
  interface Candidate extends TopicLink {
    start: number;
    end: number;
    precedence: number;
  }
  const candidates: Candidate[] = [];
  linkifiers.forEach((linkifier, precedence) => {
    const compiled = compileLinkifier(linkifier);
    if (!compiled) return;
    for (let pos = 0; pos < topic.length; ) {
      const m = compiled.find(topic, pos);
      if (!m) break;
      // A template may expand to a javascript:, data: or vbscript: URL (the scheme may come from
      // the topic itself); such a link is dropped, as content drops it.
      if (sanitizeUrl(m.url) !== undefined) candidates.push({ text: m.text, url: m.url, start: m.start, end: m.end, precedence });
      pos = m.end > pos ? m.end : pos + 1;
    }
  });
  // Bare URLs come last in precedence; a scheme-less one gets https://.
  const state = new RenderState({ realmUrl: '' });
  const splitter = /[ !;),'"]/;
  let offset = 0;
  for (const piece of topic.split(splitter)) {
    const m = autolink.find(piece, 0, { state } as never);
    if (m && typeof m.node !== 'string' && m.node !== null) {
      const text = piece.slice(m.start, m.end);
      const url = /^[a-z][a-z0-9+.-]*:/i.test(text) ? text : `https://${text}`;
      const start = offset + m.start;
      candidates.push({ text, url, start, end: start + text.length, precedence: linkifiers.length });
    }
    offset += piece.length + 1;
  }
  candidates.sort((a, b) => a.precedence - b.precedence || a.start - b.start);
  const accepted: Candidate[] = [];
  for (const c of candidates) {
    if (accepted.some((a) => c.start < a.end && a.start < c.end)) continue;
    accepted.push(c);
  }
  accepted.sort((a, b) => a.start - b.start);
  return accepted.map(({ text, url }) => ({ text, url }));
}

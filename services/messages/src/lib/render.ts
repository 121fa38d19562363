/**
 * Message rendering behind one function, `renderContent`. Until @zc/markdown is built this
 * is a deliberately small, safe renderer: every character a user typed is HTML-escaped,
 * paragraphs are split on blank lines, single line breaks become <br>, http(s) URLs become
 * links, and Zulip's mention and stream-link syntax is recognised so that the `mentioned`
 * and `wildcard_mentioned` flags work. Its context and result mirror @zc/markdown's
 * RenderContext/RenderResult, so switching is a change of this file only
 * (TODO(issue-3): call @zc/markdown's `render` once it exports one).
 */

export interface MentionUser {
  id: number;
  full_name: string;
  is_active?: boolean;
}

/** The subset of @zc/markdown's RenderContext this renderer reads. */
export interface RenderContext {
  realmUrl: string;
  users?: { byFullName(name: string): MentionUser | undefined; byId(id: number): MentionUser | undefined };
  streams?: { byName(name: string): { id: number; name: string } | undefined };
}

export interface Rendered {
  html: string;
  mentioned_user_ids: number[];
  wildcard_mention: 'stream' | 'topic' | null;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
  is_me_message: boolean;
}

/** Bumped whenever the HTML this produces changes, so stored messages can be re-rendered. */
export const RENDERER_VERSION = 1;

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

const STREAM_WILDCARDS = new Set(['all', 'everyone', 'stream', 'channel']);

// @**Name**, @**Name|id**, silent @_**...**, #**stream**, and bare http(s) URLs.
const TOKEN = /(@_?\*\*([^*\n]+?)\*\*)|(#\*\*([^*\n]+?)\*\*)|(https?:\/\/[^\s<>"]+[^\s<>"'.,;:!?)\]])/g;

interface InlineState {
  ctx: RenderContext;
  mentioned: Set<number>;
  wildcard: 'stream' | 'topic' | null;
  hasLink: boolean;
  hasAttachment: boolean;
}

function renderMention(token: string, body: string, s: InlineState): string {
  const silent = token.startsWith('@_');
  if (!silent && STREAM_WILDCARDS.has(body)) {
    s.wildcard = 'stream';
    return `<span class="user-mention" data-user-id="*">@${escapeHtml(body)}</span>`;
  }
  if (!silent && body === 'topic') {
    s.wildcard ??= 'topic';
    return `<span class="topic-mention">@${escapeHtml(body)}</span>`;
  }
  const bar = /^(.*)\|(\d+)$/.exec(body);
  const user = bar ? s.ctx.users?.byId(Number(bar[2])) : s.ctx.users?.byFullName(body);
  if (!user || (bar && user.full_name.toLowerCase() !== (bar[1] as string).toLowerCase() && bar[1] !== '')) return escapeHtml(token);
  const quiet = silent || user.is_active === false;
  if (!quiet) s.mentioned.add(user.id);
  const cls = quiet ? 'user-mention silent' : 'user-mention';
  return `<span class="${cls}" data-user-id="${user.id}">${quiet ? '' : '@'}${escapeHtml(user.full_name)}</span>`;
}

function renderInline(text: string, s: InlineState): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    out += escapeHtml(text.slice(last, m.index));
    last = (m.index as number) + m[0].length;
    if (m[1]) {
      out += renderMention(m[1], m[2] as string, s);
    } else if (m[3]) {
      const stream = s.ctx.streams?.byName(m[4] as string);
      out += stream
        ? `<a class="stream" data-stream-id="${stream.id}" href="/#narrow/stream/${stream.id}-${encodeURIComponent(stream.name.replace(/ /g, '-'))}">#${escapeHtml(stream.name)}</a>`
        : escapeHtml(m[3]);
    } else {
      const url = m[5] as string;
      s.hasLink = true;
      if (url.startsWith(`${s.ctx.realmUrl}/user_uploads/`)) s.hasAttachment = true;
      out += `<a href="${escapeHtml(url)}">${escapeHtml(url)}</a>`;
    }
  }
  return out + escapeHtml(text.slice(last));
}

/** Renders a message's Markdown source to HTML that contains no markup the user wrote. */
export function renderContent(content: string, ctx: RenderContext): Rendered {
  const s: InlineState = { ctx, mentioned: new Set(), wildcard: null, hasLink: false, hasAttachment: false };
  const paragraphs = content
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '');
  const html = paragraphs.map((p) => `<p>${p.split('\n').map((line) => renderInline(line, s)).join('<br>\n')}</p>`).join('\n');
  return {
    html,
    mentioned_user_ids: [...s.mentioned],
    wildcard_mention: s.wildcard,
    has_link: s.hasLink,
    has_image: false,
    has_attachment: s.hasAttachment,
    is_me_message: /^\/me /.test(content) && !content.includes('\n'),
  };
}

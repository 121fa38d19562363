// The HTML of a code block, in Zulip's shape:
//   <div class="codehilite" data-code-language="Python"><pre><span></span><code>…</code></pre></div>

import { escapeAttribute, escapeCode, escapeMinimal } from '../escape.js';
import { findLanguage, type Language } from './languages.js';
import type { Token } from './python.js';

// A first line such as `:::python` or `#!/usr/bin/env python` names the
// language of an untagged block; the line itself stays part of the code.
const HEADER_LINE = /^(?:::+|#!)(?:(?:\/\w+)*[/ ])?([\w#.+-]*)/;

/** Wraps tokens in spans, merging neighbours of one class; spans never cross a newline. */
function formatTokens(tokens: readonly Token[], escape: (s: string) => string): string {
  const out: string[] = [];
  let openClass: string | undefined;
  for (const [cls, value] of tokens) {
    const parts = value.split('\n');
    for (let i = 0; i < parts.length; i++) {
      if (i > 0) {
        if (openClass !== undefined) out.push('</span>');
        openClass = undefined;
        out.push('\n');
      }
      const part = parts[i] as string;
      if (!part) continue;
      if (openClass !== cls) {
        if (openClass !== undefined) out.push('</span>');
        openClass = undefined;
        if (cls) {
          out.push(`<span class="${cls}">`);
          openClass = cls;
        }
      }
      out.push(escape(part));
    }
  }
  if (openClass !== undefined) out.push('</span>');
  return out.join('');
}

function languageFromHeader(code: string): Language | undefined {
  const firstLine = code.slice(0, code.indexOf('\n') >>> 0);
  const m = HEADER_LINE.exec(firstLine);
  return m?.[1] ? findLanguage(m[1]) : undefined;
}

/** Renders a code block; `lang` is what the user wrote after the fence, if anything. */
export function formatCodeBlock(code: string, lang: string | undefined): string {
  let start = 0;
  let end = code.length;
  while (start < end && code[start] === '\n') start++;
  while (end > start && code[end - 1] === '\n') end--;
  const source = `${code.slice(start, end)}\n`;
  const language = lang ? findLanguage(lang) : languageFromHeader(source);
  const tokens: Token[] = language?.tokenize ? language.tokenize(source) : [['', source]];
  if (!lang) {
    return `<div class="codehilite"><pre><span></span><code>${formatTokens(tokens, escapeCode)}</code></pre></div>`;
  }
  // Tagged blocks went through an HTML re-serialisation in Zulip that only
  // escapes &, < and > in text, so quotes stay literal there.
  const name = language?.name ?? lang;
  return `<div class="codehilite" data-code-language="${escapeAttribute(name)}"><pre><span></span><code>${formatTokens(tokens, escapeMinimal)}</code></pre></div>`;
}

// TeX math through KaTeX. KaTeX is pinned to the 0.16 line because Zulip's
// clients ship that version's stylesheet (and the conformance fixtures were
// produced with it); 0.19 renamed classes such as `base` and `strut`.

import katex from 'katex';
import { escapeWithQuotes } from './escape.js';

function renderTex(tex: string, displayMode: boolean): string | undefined {
  try {
    return katex.renderToString(tex, {
      displayMode,
      throwOnError: true,
      // Never honour \href, \url, \htmlClass and friends: they create links and attributes.
      trust: false,
      // Same output as the default 'warn', without writing to the console.
      strict: 'ignore',
      maxExpand: 1000,
      maxSize: 100,
    });
  } catch {
    // Parse errors, but also stack exhaustion on absurdly nested input.
    return undefined;
  }
}

/** Renders `$$…$$` math; undefined when KaTeX rejects it. */
export function renderInlineMath(tex: string): string | undefined {
  return renderTex(tex, false);
}

/** Renders one paragraph of a ```math block, or Zulip's error span for it. */
export function renderDisplayMath(tex: string): string {
  return renderTex(tex, true) ?? `<span class="tex-error">${escapeWithQuotes(tex)}</span>`;
}

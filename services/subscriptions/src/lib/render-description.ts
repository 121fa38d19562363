/**
 * Stream descriptions are Markdown; clients show `rendered_description` (spec 2.5). The
 * @zc/markdown package is built beside this service: when its build is present we render
 * with it, otherwise (while it is being written) the text is escaped into one paragraph,
 * which is what the renderer produces for plain text.
 */
type Render = (content: string, ctx: { realmUrl: string }) => unknown;

let loaded: Promise<Render | undefined> | undefined;

async function loadRenderer(): Promise<Render | undefined> {
  try {
    // A computed specifier: this package does not depend on @zc/markdown at build time.
    const specifier = '@zc/markdown';
    const mod = (await import(specifier)) as { render?: unknown };
    return typeof mod.render === 'function' ? (mod.render as Render) : undefined;
  } catch {
    return undefined;
  }
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}

/** Plain-text fallback: one escaped paragraph, nothing for an empty description. */
export function renderPlainDescription(text: string): string {
  return text.trim() === '' ? '' : `<p>${escapeHtml(text)}</p>`;
}

/** The HTML of a stream description, rendered in the realm's context. */
export async function renderDescription(text: string, realmUrl: string): Promise<string> {
  if (text.trim() === '') return '';
  loaded ??= loadRenderer();
  const render = await loaded;
  if (!render) return renderPlainDescription(text);
  const out = await render(text, { realmUrl });
  if (typeof out === 'string') return out;
  const html = (out as { html?: unknown } | null)?.html;
  return typeof html === 'string' ? html : renderPlainDescription(text);
}

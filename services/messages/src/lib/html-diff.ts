/**
 * content_html_diff of GET /messages/{id}/history: the newer rendered HTML with text that
 * appeared wrapped in `<span class="highlight_text_inserted">` and text that disappeared put
 * back in `<span class="highlight_text_deleted">` (Zulip's class names). Both inputs are the
 * renderer's output, so splitting them into tags and words never cuts through markup; tags of
 * the older version are dropped, so the structure is always the newer one's. Pure.
 */

// Zulip diffs with a proper HTML differ; a word-level LCS is enough for a highlight and keeps
// the cost bounded: beyond this many cells the newer HTML comes back unhighlighted.
const MAX_CELLS = 4_000_000;

function tokens(html: string): string[] {
  return html.match(/<[^>]*>|[^<\s]+|\s+/g) ?? [];
}

const isTag = (t: string) => t.startsWith('<');
const isSpace = (t: string) => /^\s+$/.test(t);

export function htmlDiff(older: string, newer: string): string {
  const a = tokens(older);
  const b = tokens(newer);
  if (a.length * b.length > MAX_CELLS) return newer;
  // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? (lcs[(i + 1) * width + j + 1] as number) + 1 : Math.max(lcs[(i + 1) * width + j] as number, lcs[i * width + j + 1] as number);
    }
  }
  let out = '';
  let i = 0;
  let j = 0;
  const wrap = (cls: string, t: string) => (isTag(t) || isSpace(t) ? t : `<span class="${cls}">${t}</span>`);
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out += b[j];
      i++;
      j++;
    } else if (j < b.length && (i >= a.length || (lcs[i * width + j + 1] as number) >= (lcs[(i + 1) * width + j] as number))) {
      out += wrap('highlight_text_inserted', b[j] as string);
      j++;
    } else {
      const t = a[i] as string;
      if (!isTag(t)) out += wrap('highlight_text_deleted', t);
      i++;
    }
  }
  return out;
}

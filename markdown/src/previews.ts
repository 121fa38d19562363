// After rendering: collect the message's links (has_link, attachments) and add
// inline previews below paragraphs that link to images or videos. Links in
// quotes are not previewed (the quoted message already showed them). A link to
// an upload is previewed when the upload is a thumbnailed image, with its
// thumbnail (Zulip 9's rendering of ImageAttachment previews).

import { createHmac } from 'node:crypto';
import type { UploadedImagePreview } from './context.js';
import type { RenderState } from './state.js';
import { El } from './tree.js';

const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];
const VIDEO_EXTENSIONS = ['.mp4', '.webm'];
/** With more distinct previewable links than this, a message gets no previews at all. */
const PREVIEW_LIMIT = 24;
const PREVIEW_CLASSES = ['message_inline_image', 'message_inline_ref', 'inline-preview-twitter'];

interface FoundLink {
  a: El;
  url: string;
  text: string;
  parent: El;
  grandparent: El | undefined;
  inBlockquote: boolean;
}

export interface LinkFacts {
  links: string[];
  hasImage: boolean;
  attachmentPathIds: string[];
}

/** Breadth-first, as previews are numbered and deduplicated in that order. */
function findLinks(root: El): FoundLink[] {
  const found: FoundLink[] = [];
  const queue: Array<{ el: El; parent: El | undefined; inBlockquote: boolean }> = [
    { el: root, parent: undefined, inBlockquote: false },
  ];
  for (let head = 0; head < queue.length; head++) {
    const { el, parent, inBlockquote } = queue[head] as (typeof queue)[number];
    for (const child of el.children) {
      if (child.children.length) {
        queue.push({ el: child, parent: el, inBlockquote: inBlockquote || el.tag === 'blockquote' });
      }
      const href = child.tag === 'a' ? child.get('href') : undefined;
      if (href !== undefined) {
        found.push({
          a: child,
          url: href,
          text: child.text,
          parent: el,
          grandparent: parent,
          inBlockquote: inBlockquote || el.tag === 'blockquote',
        });
      }
    }
  }
  return found;
}

function pathOf(url: string): string | undefined {
  const m = /^https?:\/\/[^/?#]*([^?#]*)/i.exec(url);
  return m ? (m[1] as string).toLowerCase() : undefined;
}

function proxiedUrl(url: string, state: RenderState): string {
  const proxy = state.ctx.imageProxy;
  if (!proxy) return url;
  const digest = createHmac('sha1', proxy.key).update(url, 'utf8').digest('hex');
  const base = proxy.url.endsWith('/') ? proxy.url : `${proxy.url}/`;
  return `${base}${digest}/${Buffer.from(url, 'utf8').toString('hex')}`;
}

/** Index after `parent` in `grandparent`, past previews already added for its links. */
function insertionIndex(grandparent: El, parent: El): number {
  const parentLinks = new Set<string>();
  const stack = [parent];
  while (stack.length) {
    const el = stack.pop() as El;
    if (el.tag === 'a') parentLinks.add(el.get('href') ?? '');
    stack.push(...el.children);
  }
  let index = grandparent.children.indexOf(parent);
  for (;;) {
    index++;
    const uncle = grandparent.children[index];
    if (!uncle || uncle.tag !== 'div') return index;
    const classes = (uncle.get('class') ?? '').split(' ');
    if (!classes.some((c) => PREVIEW_CLASSES.includes(c))) return index;
    if (!parentLinks.has(uncle.children[0]?.get('href') ?? '')) return index;
  }
}

type Preview = { kind: 'image' | 'video' } | { kind: 'upload'; image: UploadedImagePreview };

function addPreview(root: El, link: FoundLink, preview: Preview, state: RenderState): void {
  const urlIsText = link.text === '' || link.text === link.url;
  const div = new El('div', { class: preview.kind === 'video' ? 'message_inline_image message_inline_video' : 'message_inline_image' });
  const a = div.sub('a', { href: link.url });
  if (!urlIsText) a.set('title', link.text);
  if (preview.kind === 'upload') {
    // Zulip: clients size the box from the original's dimensions and swap in the animated
    // format (server_thumbnail_formats) for images marked animated.
    const { image } = preview;
    a.sub('img', {
      ...(image.animated ? { 'data-animated': 'true' } : {}),
      'data-original-dimensions': `${image.width}x${image.height}`,
      src: image.thumbnailUrl,
    });
  } else if (preview.kind === 'image') a.sub('img', { src: proxiedUrl(link.url, state) });
  else a.sub('video', { preload: 'metadata', src: proxiedUrl(link.url, state) });

  const { parent, grandparent } = link;
  if (parent.tag === 'li') {
    parent.append(div);
    if (!parent.text && !link.a.tail && urlIsText) parent.remove(link.a);
  } else if (parent.tag === 'p' && grandparent) {
    grandparent.insert(insertionIndex(grandparent, parent), div);
    const alone = parent.children.length === 1 && (!parent.text || parent.text === '\n') && !link.a.tail;
    if (alone && urlIsText) grandparent.remove(parent);
  } else {
    root.append(div);
  }
}

function previewOf(url: string, state: RenderState): Preview | undefined {
  const pathId = uploadPathId(url, state.ctx.realmUrl);
  if (pathId !== undefined) {
    const image = state.ctx.uploadedImages?.byPathId(pathId);
    return image ? { kind: 'upload', image } : undefined;
  }
  const path = pathOf(url);
  if (path === undefined) return undefined;
  if (IMAGE_EXTENSIONS.some((ext) => path.endsWith(ext))) return { kind: 'image' };
  if (VIDEO_EXTENSIONS.some((ext) => path.endsWith(ext))) return { kind: 'video' };
  return undefined;
}

function uploadPathId(url: string, realmUrl: string): string | undefined {
  const realmHost = /^https?:\/\/([^/?#]*)/i.exec(realmUrl)?.[1];
  let path: string;
  const absolute = /^https?:\/\/([^/?#]*)([^?#]*)/i.exec(url);
  if (absolute) {
    if (absolute[1] !== realmHost) return undefined;
    path = absolute[2] as string;
  } else {
    path = (url.startsWith('/') ? url : `/${url}`).replace(/[?#].*$/s, '');
  }
  return path.startsWith('/user_uploads/') ? path.slice('/user_uploads/'.length) : undefined;
}

/** Collects link facts and inserts image/video previews into the tree. */
export function processLinks(root: El, state: RenderState): LinkFacts {
  const found = findLinks(root);
  const links = [...new Set(found.map((f) => f.url))];
  const attachmentPathIds = links
    .map((url) => uploadPathId(url, state.ctx.realmUrl))
    .filter((id): id is string => id !== undefined);
  let hasImage = false;
  const previewable = new Set(found.filter((f) => !f.inBlockquote).map((f) => f.url));
  if (state.ctx.inlineImagePreview !== false && previewable.size <= PREVIEW_LIMIT) {
    const done = new Set<string>();
    for (const link of found) {
      if (!previewable.has(link.url) || done.has(link.url)) continue;
      done.add(link.url);
      const preview = previewOf(link.url, state);
      if (!preview) continue;
      addPreview(root, link, preview, state);
      hasImage = true;
    }
  }
  return { links, hasImage, attachmentPathIds };
}

// Emoji: `:name:` (realm emoji first, then Unicode names), emoticons such as
// `:)` when the sender asked for them, and Unicode emoji typed directly. All
// become the same span, titled with the name, so every client can show them.

import { emojiCode, emojiTables } from '../emoji.js';
import { atomicEl, type El } from '../tree.js';
import type { InlineEnv, InlinePattern } from './engine.js';
import { isWordChar, NextIndex, perText } from './scan.js';

// Zulip's own logo emoji has no Unicode code point.
const ZULIP_EMOJI_URL = '/static/generated/emoji/images/emoji/unicode/zulip.png';

function emojiSpan(code: string, displayName: string): El {
  const title = displayName.replaceAll('_', ' ');
  return atomicEl('span', `:${displayName}:`, {
    'aria-label': title,
    class: `emoji emoji-${code}`,
    role: 'img',
    title,
  });
}

function imageEmoji(name: string, src: string): El {
  const img = atomicEl('img', '', { alt: `:${name}:`, class: 'emoji', src, title: name.replaceAll('_', ' ') });
  return img;
}

function emojiByName(name: string, env: InlineEnv): El | undefined {
  const realm = env.state.ctx.realmEmoji?.byName(name);
  if (realm && !realm.deactivated) return imageEmoji(name, realm.source_url);
  if (name === 'zulip') return imageEmoji(name, ZULIP_EMOJI_URL);
  const code = emojiTables().nameToCode.get(name);
  return code ? emojiSpan(code, name) : undefined;
}

const nextColon = perText((data) => new NextIndex(data, ':'));
const isNameChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || c === '-' || c === '+');

/** `:name:` with a name of word characters, `-` and `+`. */
export const emoji: InlinePattern = {
  name: 'emoji',
  find(data, from, env) {
    for (let p = nextColon(data).from(from); p >= 0; p = nextColon(data).from(p + 1)) {
      let q = p + 1;
      while (q < data.length && isNameChar(data[q])) q++;
      if (q === p + 1 || data[q] !== ':') continue;
      const el = emojiByName(data.slice(p + 1, q), env);
      // An unknown name is kept as opaque text, so nothing later reads into it.
      return { start: p, end: q + 1, node: el ?? data.slice(p, q + 1) };
    }
    return undefined;
  },
};

const EMOTICON_BOUNDARY = `,.;?!()[] "'\n\t`;
let emoticonStarts: string | undefined;

/** The first emoticon standing alone or next to punctuation at or after `from`: its place and `:name:`. */
function findEmoticon(data: string, from: number): { start: number; end: number; name: string } | undefined {
  const { emoticons } = emojiTables();
  emoticonStarts ??= emoticons.map(([emoticon]) => emoticon[0]).join('');
  for (let p = from; p < data.length - 1; p++) {
    if (!emoticonStarts.includes(data[p] as string)) continue;
    if (p > 0 && !EMOTICON_BOUNDARY.includes(data[p - 1] as string)) continue;
    for (const [emoticon, name] of emoticons) {
      if (!data.startsWith(emoticon, p)) continue;
      const after = p + emoticon.length;
      if (after < data.length && !EMOTICON_BOUNDARY.includes(data[after] as string)) continue;
      return { start: p, end: after, name };
    }
  }
  return undefined;
}

/**
 * Whether the sender's "translate emoticons" setting could change how `content` renders: the
 * raw text has an emoticon where the renderer would translate it (one inside code also
 * counts: a cheap superset). Lets a caller skip looking the setting up for the many messages
 * without one.
 */
export function mayTranslateEmoticons(content: string): boolean {
  return findEmoticon(content, 0) !== undefined;
}

/** `:)`, `<3`… standing alone or next to punctuation. */
export const emoticon: InlinePattern = {
  name: 'translate_emoticons',
  find(data, from) {
    const { nameToCode } = emojiTables();
    for (let found = findEmoticon(data, from); found; found = findEmoticon(data, found.start + 1)) {
      const bare = found.name.slice(1, -1);
      const code = nameToCode.get(bare);
      if (code) return { start: found.start, end: found.end, node: emojiSpan(code, bare) };
    }
    return undefined;
  },
};

const RI = /\p{Regional_Indicator}/u;
const EMOJI = /\p{Emoji}/u;
const MODIFIER = /\p{Emoji_Modifier}/u;

/** Length of one emoji element (flag pair, or emoji plus modifier/keycap/tag sequence) at i, or 0. */
function elementLength(data: string, i: number): number {
  const first = String.fromCodePoint(data.codePointAt(i) ?? 0);
  if (i >= data.length) return 0;
  let j = i + first.length;
  if (RI.test(first)) {
    const second = String.fromCodePoint(data.codePointAt(j) ?? 0);
    return j < data.length && RI.test(second) ? j + second.length - i : 0;
  }
  if (!EMOJI.test(first)) return 0;
  const next = String.fromCodePoint(data.codePointAt(j) ?? 0);
  if (j < data.length && MODIFIER.test(next)) {
    j += next.length;
  } else if (data[j] === '\ufe0f') {
    j++;
    if (data[j] === '\u20e3') j++;
  } else {
    // Tag sequences (subdivision flags): tag characters then a cancel tag.
    let k = j;
    while (k < data.length) {
      const cp = data.codePointAt(k) as number;
      if (cp < 0xe0020 || cp > 0xe007e) break;
      k += 2;
    }
    if (k > j && data.codePointAt(k) === 0xe007f) j = k + 2;
  }
  return j - i;
}

/** Finds emoji sequences (elements joined by ZWJ) and renders those Zulip knows. */
export const unicodeEmoji: InlinePattern = {
  name: 'unicodeemoji',
  find(data, from) {
    for (let p = from; p < data.length; p++) {
      const c = data.charCodeAt(p);
      // Everything \p{Emoji} below U+00A9 is a digit, '#' or '*': only keycaps matter there.
      if (c < 0xa9 && !(data[p + 1] === '\ufe0f' && (c === 0x23 || c === 0x2a || (c >= 0x30 && c <= 0x39)))) continue;
      let end = p + elementLength(data, p);
      if (end === p) continue;
      while (data[end] === '\u200d') {
        const more = elementLength(data, end + 1);
        if (more === 0) break;
        end += 1 + more;
      }
      const text = data.slice(p, end);
      const code = emojiCode(text);
      const name = emojiTables().codeToName.get(code);
      return { start: p, end, node: name ? emojiSpan(code, name) : null };
    }
    return undefined;
  },
};

// Zulip's emoji names, loaded once from data/emoji-names.json (shipped with
// the package, see data/README.md).

import { readFileSync } from 'node:fs';

interface EmojiData {
  code_to_names: Record<string, string[]>;
  emoticon_conversions: Record<string, string>;
}

export interface EmojiTables {
  /** Any name (canonical or alias) → code point string such as `1f642`. */
  nameToCode: ReadonlyMap<string, string>;
  /** Code point string → canonical name. */
  codeToName: ReadonlyMap<string, string>;
  /** Emoticon → `:name:`, in the order they are tried. */
  emoticons: ReadonlyArray<[string, string]>;
}

let tables: EmojiTables | undefined;

export function emojiTables(): EmojiTables {
  if (tables) return tables;
  const data = JSON.parse(readFileSync(new URL('../data/emoji-names.json', import.meta.url), 'utf8')) as EmojiData;
  const nameToCode = new Map<string, string>();
  const codeToName = new Map<string, string>();
  for (const [code, names] of Object.entries(data.code_to_names)) {
    if (names[0] !== undefined) codeToName.set(code, names[0]);
    for (const name of names) if (!nameToCode.has(name)) nameToCode.set(name, code);
  }
  tables = { nameToCode, codeToName, emoticons: Object.entries(data.emoticon_conversions) };
  return tables;
}

/** `1f441-200d-1f5e8` for 👁‍🗨: code points in hex, variation selectors dropped. */
export function emojiCode(emoji: string): string {
  const parts: string[] = [];
  for (const c of emoji) {
    const cp = c.codePointAt(0) as number;
    if (cp === 0xfe0f) continue;
    parts.push(cp.toString(16).padStart(4, '0'));
  }
  return parts.join('-');
}

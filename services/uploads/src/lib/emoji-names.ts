/**
 * Custom emoji names and where an emoji's files live, as Zulip names them. Pure.
 */
import { emojiTables } from '@zc/markdown';
import type { RealmEmoji } from '@zc/shared/contracts';
import { emojiNameMissing, invalidEmojiName } from './errors.js';

/** Lower-case letters, digits, `.`, `-`, `_`; not ending in punctuation (Zulip's check_valid_emoji_name). */
const VALID_NAME = /^[0-9a-z.\-_]+(?<![.\-_])$/;

/** The name a request gives, as Zulip's upload_emoji takes it: trimmed, spaces as underscores, then checked. */
export function normaliseEmojiName(raw: string): string {
  const name = raw.trim().replaceAll(' ', '_');
  if (name === '') throw emojiNameMissing();
  if (!VALID_NAME.test(name)) throw invalidEmojiName();
  return name;
}

/** Whether the name is one of the built-in emoji (Unicode names and `zulip`): only administrators override those. */
export function isBuiltInEmojiName(name: string): boolean {
  return name === 'zulip' || emojiTables().nameToCode.has(name);
}

/** Storage keys and URL paths of one emoji's images: `<id>.<ext>`, its `.original`, and `still/<id>.png` if animated. */
export function emojiFiles(realmId: number, id: number, ext: string) {
  const dir = `avatars/${realmId}/emoji/images`;
  const fileName = `${id}.${ext}`;
  return {
    fileName,
    imageKey: `${dir}/${fileName}`,
    originalKey: `${dir}/${fileName}.original`,
    stillKey: `${dir}/still/${id}.png`,
  };
}

/** The URL paths clients load an emoji from (relative to the realm's URL). */
export function emojiUrls(realmId: number, id: number, fileName: string, animated: boolean): { source_url: string; still_url: string | null } {
  const base = `/user_avatars/${realmId}/emoji/images`;
  return { source_url: `${base}/${fileName}`, still_url: animated ? `${base}/still/${id}.png` : null };
}

/**
 * Which emoji image a public URL names: `<id>.<ext>` or `still/<id>.png`. Anything else
 * (another shape, traversal) is undefined and answered "not found".
 */
export function parseEmojiImagePath(file: string): { id: number; still: boolean; ext: string } | undefined {
  const m = /^(still\/)?([1-9][0-9]{0,14})\.(png|gif|jpg|webp)$/.exec(file);
  if (!m) return undefined;
  if (m[1] && m[3] !== 'png') return undefined;
  return { id: Number(m[2]), still: m[1] !== undefined, ext: m[3] as string };
}

/** A stored emoji as clients see it (Zulip's RealmEmoji dict: the id as a string). */
export function toApiRealmEmoji(row: { id: number; realm_id: number; name: string; author_id: number | null; file_name: string; is_animated: boolean; deactivated: boolean }): RealmEmoji {
  return {
    id: String(row.id),
    name: row.name,
    ...emojiUrls(row.realm_id, row.id, row.file_name, row.is_animated),
    deactivated: row.deactivated,
    author_id: row.author_id,
  };
}

/** A realm's emoji keyed by id, as GET /realm/emoji, /register and the `realm_emoji` event carry them. */
export function realmEmojiDict(rows: readonly Parameters<typeof toApiRealmEmoji>[0][]): Record<string, RealmEmoji> {
  return Object.fromEntries(rows.map((r) => [String(r.id), toApiRealmEmoji(r)]));
}

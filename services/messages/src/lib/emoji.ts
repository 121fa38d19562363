/**
 * The `:name:` spans of a message that could name a custom emoji (the emoji request rules
 * are shared: @zc/shared/emoji).
 */

/** At most this many distinct `:name:` candidates of one message are looked up among the realm's emoji. */
const MAX_NAME_CANDIDATES = 100;

/**
 * The names in `:name:` spans of `content` that a custom emoji could have (lower-case letters,
 * digits, `_` and `-`; overlapping spans included), a superset of what the renderer will look
 * up. Pure.
 */
export function customEmojiCandidates(content: string): string[] {
  const names = new Set<string>();
  for (const m of content.matchAll(/:(?=([0-9a-z_-]+):)/g)) {
    names.add(m[1] as string);
    if (names.size >= MAX_NAME_CANDIDATES) break;
  }
  return [...names];
}

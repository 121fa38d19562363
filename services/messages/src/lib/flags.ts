/**
 * Personal message flags (spec 2.9) as the bits of `user_message.flags`. `is_private` is
 * internal (it lets "is:dm" use an index); `historical` marks a row created after the fact.
 */
export const FLAG_BITS = {
  read: 1,
  starred: 2,
  collapsed: 4,
  mentioned: 8,
  wildcard_mentioned: 16,
  has_alert_word: 32,
  historical: 64,
  is_private: 128,
} as const;

export type FlagName = keyof typeof FLAG_BITS;

/** Flags a client may change with POST /messages/flags. */
export const EDITABLE_FLAGS: readonly FlagName[] = ['read', 'starred', 'collapsed'];

/** Flags a client can see (everything but the internal ones), in Zulip's order. */
const API_FLAGS: readonly FlagName[] = ['read', 'starred', 'collapsed', 'mentioned', 'wildcard_mentioned', 'has_alert_word', 'historical'];

/** What a reader without a user_message row gets on a message it may read (Zulip's default for historical access). */
export const HISTORICAL_FLAGS = FLAG_BITS.read | FLAG_BITS.historical;

export function flagNames(bits: number): string[] {
  return API_FLAGS.filter((f) => (bits & FLAG_BITS[f]) !== 0);
}

export function isApiFlag(name: string): name is FlagName {
  return (API_FLAGS as readonly string[]).includes(name);
}

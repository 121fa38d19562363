/**
 * Which emoji a request names, with Zulip's rules (zerver/lib/emoji.py), for reactions (the
 * messages service) and status emoji (the users service): a name is looked up among the
 * realm's active custom emoji first, then "zulip", then the Unicode names; a code given with a
 * type must exist and agree with the name. Pure: the realm's custom emoji come in (their
 * owner is the uploads service: `uploads.v1.find_emoji`).
 */
import { emojiTables } from '@zc/markdown';
import { badRequest } from '@zc/shared/errors';

export const REACTION_TYPES = ['unicode_emoji', 'realm_emoji', 'zulip_extra_emoji'] as const;
export type ReactionType = (typeof REACTION_TYPES)[number];

/** A realm's custom emoji as reactions need it: `id` is the emoji_code of a realm_emoji reaction. */
export interface RealmEmojiRef {
  id: string;
  name: string;
  deactivated: boolean;
}

export interface EmojiRef {
  emoji_code: string;
  reaction_type: ReactionType;
}

/** Zulip's only extra emoji. */
const ZULIP_EMOJI = 'zulip';

/**
 * The reaction_type a client sent, if it is one. Our spec calls the extra-emoji type
 * `service_extra_emoji`; Zulip clients send `zulip_extra_emoji`, which is what is stored.
 */
export function parseReactionType(raw: string): ReactionType | undefined {
  if (raw === 'service_extra_emoji') return 'zulip_extra_emoji';
  return (REACTION_TYPES as readonly string[]).includes(raw) ? (raw as ReactionType) : undefined;
}

/** Zulip's get_emoji_data: the emoji a bare name stands for now. */
export function emojiByName(name: string, realmEmoji: readonly RealmEmojiRef[]): EmojiRef {
  const custom = realmEmoji.find((e) => e.name === name && !e.deactivated);
  if (custom) return { emoji_code: custom.id, reaction_type: 'realm_emoji' };
  if (name === ZULIP_EMOJI) return { emoji_code: ZULIP_EMOJI, reaction_type: 'zulip_extra_emoji' };
  const code = emojiTables().nameToCode.get(name);
  if (code !== undefined) return { emoji_code: code, reaction_type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/** Zulip's check_emoji_request: a new reaction's name, code and type must name one valid emoji. */
export function checkEmojiRequest(name: string, code: string, type: string, realmEmoji: readonly RealmEmojiRef[]): void {
  if (type === 'realm_emoji') {
    const custom = realmEmoji.find((e) => e.id === code);
    if (!custom) throw badRequest('Invalid custom emoji.');
    if (custom.name !== name) throw badRequest('Invalid custom emoji name.');
    if (custom.deactivated) throw badRequest('This custom emoji has been deactivated.');
  } else if (type === 'zulip_extra_emoji') {
    if (code !== ZULIP_EMOJI) throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'unicode_emoji') {
    const t = emojiTables();
    if (!t.codeToName.has(code)) throw badRequest('Invalid emoji code.');
    if (t.nameToCode.get(name) !== code) throw badRequest('Invalid emoji name.');
  } else {
    throw badRequest('Invalid emoji type.');
  }
}

/** Whether a name is one of the built-in emoji (Unicode names and `zulip`). */
export function isBuiltInEmojiName(name: string): boolean {
  return name === ZULIP_EMOJI || emojiTables().nameToCode.has(name);
}

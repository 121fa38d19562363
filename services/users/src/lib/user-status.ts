/**
 * Zulip's user status rules (views/user_status.py, lib/user_status.py): what a request may
 * set, and how a status looks in /register and events (keys only while non-empty).
 */
import { checkEmojiRequest, emojiByName, parseReactionType, type EmojiRef, type RealmEmojiRef } from '@zc/shared/emoji';
import { badRequest } from '@zc/shared/errors';
import type { StatusChange, UserStatusRow } from '../store/user-status-store.js';

export const STATUS_TEXT_MAX_LENGTH = 60;

export interface StatusRequest {
  away?: boolean;
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

/**
 * The checks that need no emoji data, made before anything is asked of the uploads service:
 * something to change, a text within its limit, a code or type only with a name.
 */
export function checkStatusShape(r: StatusRequest): void {
  const text = r.status_text?.trim();
  if (r.away === undefined && text === undefined && r.emoji_name === undefined) throw badRequest('Client did not pass any new values.');
  if (text !== undefined && text.length > STATUS_TEXT_MAX_LENGTH) throw badRequest(`status_text is too long (limit: ${STATUS_TEXT_MAX_LENGTH} characters)`);
  if (r.emoji_name === undefined && (r.emoji_code !== undefined || r.reaction_type !== undefined)) {
    throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
  }
}

/** The realm emoji a request may name (by its name, and by its code for realm_emoji), to be asked of their owner. */
export function statusEmojiLookup(r: StatusRequest): { names: string[]; ids: string[] } | undefined {
  if (r.emoji_name === undefined || r.emoji_name === '') return undefined;
  return { names: [r.emoji_name], ids: r.reaction_type === 'realm_emoji' && r.emoji_code !== undefined ? [r.emoji_code] : [] };
}

/**
 * Checks a POST /users/me/status request (after `checkStatusShape`) and returns the stored
 * fields it changes, as Zulip's update_user_status_backend: an empty name clears the emoji; a
 * name without code and type is looked up (the realm's active custom emoji first); the emoji
 * must then be one (the rules reactions follow too, @zc/shared/emoji). `realmEmoji` holds the
 * realm's emoji named by `statusEmojiLookup`.
 */
export function checkStatusRequest(r: StatusRequest, realmEmoji: readonly RealmEmojiRef[]): StatusChange {
  checkStatusShape(r);
  const text = r.status_text?.trim();
  const change: StatusChange = text === undefined ? {} : { status_text: text };
  if (r.emoji_name === undefined) return change;
  if (r.emoji_name === '') return { ...change, emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  const name = r.emoji_name;
  const given = r.reaction_type === undefined ? undefined : (parseReactionType(r.reaction_type) ?? r.reaction_type);
  const found = r.emoji_code !== undefined && given !== undefined ? undefined : emojiByName(name, realmEmoji);
  const code = r.emoji_code ?? (found as EmojiRef).emoji_code;
  const type = given ?? (found as EmojiRef).reaction_type;
  checkEmojiRequest(name, code, type, realmEmoji);
  return { ...change, emoji_name: name, emoji_code: code, reaction_type: type };
}

/** A user's entry in /register's `user_status` (Zulip's format_user_status); empty means no entry. */
export function formatUserStatus(s: UserStatusRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!s.presence_enabled) out.away = true;
  if (s.status_text !== '') out.status_text = s.status_text;
  if (s.emoji_name !== '') Object.assign(out, { emoji_name: s.emoji_name, emoji_code: s.emoji_code, reaction_type: s.reaction_type });
  return out;
}

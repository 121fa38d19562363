/**
 * Zulip's user status rules (views/user_status.py, lib/user_status.py): what a request may
 * set, and how a status looks in /register and events (keys only while non-empty).
 */
import { emojiTables } from '@zc/markdown';
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
 * Checks a POST /users/me/status request and returns the stored fields it changes. A bare
 * emoji name is looked up; an empty name clears the emoji. Custom (realm) emoji are not known
 * to this service: they are refused as Zulip refuses an unknown one.
 * TODO(issue-8): share the emoji rules with the messages service's reactions (lib/emoji.ts there).
 */
export function checkStatusRequest(r: StatusRequest): StatusChange {
  const text = r.status_text?.trim();
  if (r.away === undefined && text === undefined && r.emoji_name === undefined) throw badRequest('Client did not pass any new values.');
  if (text !== undefined && text.length > STATUS_TEXT_MAX_LENGTH) throw badRequest(`status_text is too long (limit: ${STATUS_TEXT_MAX_LENGTH} characters)`);
  const change: StatusChange = text === undefined ? {} : { status_text: text };
  if (r.emoji_name === undefined) {
    if (r.emoji_code !== undefined || r.reaction_type !== undefined) {
      throw badRequest('Client must pass emoji_name if they pass either emoji_code or reaction_type.');
    }
    return change;
  }
  if (r.emoji_name === '') return { ...change, emoji_name: '', emoji_code: '', reaction_type: 'unicode_emoji' };
  const name = r.emoji_name;
  const tables = emojiTables();
  const known = name === 'zulip' ? { code: 'zulip', type: 'zulip_extra_emoji' } : tables.nameToCode.has(name) ? { code: tables.nameToCode.get(name) as string, type: 'unicode_emoji' } : undefined;
  if (!known && r.reaction_type !== 'realm_emoji') throw badRequest(`Emoji '${name}' does not exist`);
  const code = r.emoji_code ?? known?.code ?? '';
  const type = r.reaction_type ?? known?.type ?? 'unicode_emoji';
  if (type === 'realm_emoji') throw badRequest('Invalid custom emoji.');
  if (type === 'zulip_extra_emoji') {
    if (code !== 'zulip') throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'unicode_emoji') {
    if (!tables.codeToName.has(code)) throw badRequest('Invalid emoji code.');
    if (tables.nameToCode.get(name) !== code) throw badRequest('Invalid emoji name.');
  } else {
    throw badRequest('Invalid emoji type.');
  }
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

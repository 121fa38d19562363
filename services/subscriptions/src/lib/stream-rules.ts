/**
 * Pure checks and defaults for the settings of a stream being created (spec 4.6), with
 * Zulip's error messages. Nothing here does I/O.
 */
import { AppError, badRequest } from '@zc/shared/errors';
import { LIMITS } from '@zc/shared/contracts';

/** Stream post policies (spec 2.5): anyone, administrators, full members, moderators. */
export const STREAM_POST_POLICIES = [1, 2, 3, 4] as const;
export const POST_POLICY_ADMINS_ONLY = 2;

/** Unassigned, surrogate and control code points cannot appear in a stream name (Zulip's "printable" check). */
const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Cn}]/u;

/** Trims a requested stream name, as Zulip does before any lookup. */
export function normaliseStreamName(raw: string): string {
  return raw.trim();
}

/** Throws Zulip's error for a name that cannot be a stream's; `name` is already trimmed. */
export function checkStreamName(name: string): void {
  if (name === '') throw badRequest("Channel name can't be empty.");
  const chars = [...name];
  if (chars.length > LIMITS.maxStreamNameLength) {
    throw badRequest(`Channel name too long (limit: ${LIMITS.maxStreamNameLength} characters).`);
  }
  const bad = chars.findIndex((c) => UNPRINTABLE.test(c));
  if (bad >= 0) throw badRequest(`Invalid character in channel name, at position ${bad + 1}.`);
}

/**
 * The description a new stream gets: limited to 1024 characters (checked on what the client
 * sent, with Zulip's validator message) and kept on one line.
 */
export function normaliseDescription(raw: string | undefined, index: number): string {
  if (raw === undefined) return '';
  if ([...raw].length > LIMITS.maxStreamDescriptionLength) {
    throw badRequest(`subscriptions[${index}]["description"] is too long (limit: ${LIMITS.maxStreamDescriptionLength} characters)`);
  }
  return raw.replace(/\n/g, ' ');
}

/** Named values of message_retention_days; `forever` is the name before feature level 91. */
const RETENTION_NAMES: Record<string, number | null> = { realm_default: null, unlimited: -1, forever: -1 };

/**
 * message_retention_days as stored: null inherits the realm's setting, -1 keeps forever,
 * otherwise a positive number of days.
 */
export function parseMessageRetentionDays(value: number | string): number | null {
  if (typeof value === 'string') {
    if (Object.hasOwn(RETENTION_NAMES, value)) return RETENTION_NAMES[value] as number | null;
    // A number sent as text ("30") is what form-encoding clients send for an integer.
    if (/^\d+$/.test(value)) return parseMessageRetentionDays(Number(value));
  } else if (Number.isSafeInteger(value) && value > 0) {
    return value;
  }
  throw new AppError('REQUEST_VARIABLE_INVALID', `Bad value for 'message_retention_days': ${value}`, 400, {
    var_name: 'message_retention_days',
    bad_value: value,
  });
}

/** Public streams always share history with subscribers; private ones only when asked. */
export function historyPublicToSubscribers(inviteOnly: boolean, requested: boolean | undefined): boolean {
  return inviteOnly ? (requested ?? false) : true;
}

/** stream_post_policy from the request, with the deprecated is_announcement_only alias. */
export function streamPostPolicy(policy: number | undefined, isAnnouncementOnly: boolean | undefined): number {
  if (policy !== undefined) {
    if (!(STREAM_POST_POLICIES as readonly number[]).includes(policy)) throw badRequest('Invalid stream_post_policy');
    return policy;
  }
  return isAnnouncementOnly ? POST_POLICY_ADMINS_ONLY : 1;
}

/**
 * Zulip's permission rules that need no I/O, in one place for every service: roles, the
 * realm policy values and who they admit, the waiting period that makes a member a "full
 * member", and the realm settings' defaults. Services apply them to their own copy of the
 * directory (@zc/shared/directory) or, in the users service, to its own tables.
 */
import { Role } from '../contracts/common.js';

export { Role };

export const isOwnerRole = (role: number) => role === Role.OWNER;
export const isAdminRole = (role: number) => role <= Role.ADMINISTRATOR;
export const isModeratorRole = (role: number) => role <= Role.MODERATOR;
export const isGuestRole = (role: number) => role >= Role.GUEST;

/** Zulip's realm policy values (Realm.POLICY_* / CommonPolicyEnum and its extensions). */
export const Policy = {
  MEMBERS_ONLY: 1,
  ADMINS_ONLY: 2,
  FULL_MEMBERS_ONLY: 3,
  MODERATORS_ONLY: 4,
  EVERYONE: 5,
  NOBODY: 6,
  OWNERS_ONLY: 7,
} as const;

/** The parts of a user the rules look at. */
export interface PolicySubject {
  role: number;
  /** When the account was created; decides "full member" under waiting_period_threshold. */
  date_joined: Date;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * Whether a member (not an administrator, moderator or guest) is still within the realm's
 * waiting period (days), so is not yet a full member.
 */
export function isNewMember(user: PolicySubject, waitingPeriodDays: number, now = new Date()): boolean {
  // With no waiting period nobody is new, even counted with a clock from before they joined
  // (the users service counts role:fullmembers with the instant it last announced it).
  return waitingPeriodDays > 0 && user.role >= Role.MEMBER && !isGuestRole(user.role) && now.getTime() - user.date_joined.getTime() < waitingPeriodDays * DAY_MS;
}

/** Zulip's UserProfile.has_permission: whether `user` is admitted by a realm policy value. */
export function hasPolicyPermission(user: PolicySubject, policy: number, waitingPeriodDays: number, now = new Date()): boolean {
  if (policy === Policy.NOBODY) return false;
  if (policy === Policy.EVERYONE) return true;
  if (isOwnerRole(user.role)) return true;
  if (policy === Policy.OWNERS_ONLY) return false;
  if (isAdminRole(user.role)) return true;
  if (policy === Policy.ADMINS_ONLY) return false;
  if (isModeratorRole(user.role)) return true;
  if (policy === Policy.MODERATORS_ONLY) return false;
  if (isGuestRole(user.role)) return false;
  if (policy === Policy.MEMBERS_ONLY) return true;
  return !isNewMember(user, waitingPeriodDays, now);
}

/** A realm setting whose value may be "no limit". */
const nullable = (n: number | null) => n;

/**
 * Realm settings a new realm starts with (Zulip's defaults), stored and published without the
 * `realm_` prefix. Readers use `realmSettings()` so that a setting a stored realm lacks (an
 * older record) reads as its default everywhere alike.
 */
export const REALM_SETTING_DEFAULTS = {
  add_custom_emoji_policy: 1 as number,
  allow_edit_history: true,
  allow_message_editing: true,
  /** At our feature level a map of backend name to enabled (FL 243 made the values objects). */
  authentication_methods: { Email: true } as Record<string, boolean>,
  avatar_changes_disabled: false,
  bot_creation_policy: 1 as number,
  /** Fixed at 72 hours at our level; the setting arrived at FL 162. */
  community_topic_editing_limit_seconds: 259200,
  create_private_stream_policy: 1 as number,
  create_public_stream_policy: 1 as number,
  create_web_public_stream_policy: 7 as number,
  default_code_block_language: '',
  default_language: 'en',
  delete_own_message_policy: 2 as number,
  digest_emails_enabled: false,
  digest_weekday: 1 as number,
  disallow_disposable_email_addresses: true,
  edit_topic_policy: 5 as number,
  email_changes_disabled: false,
  emails_restricted_to_domains: false,
  enable_read_receipts: true,
  enable_spectator_access: false,
  giphy_rating: 2 as number,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  invite_required: true,
  invite_to_realm_policy: 1 as number,
  invite_to_stream_policy: 1 as number,
  mandatory_topics: false,
  message_content_allowed_in_email_notifications: true,
  /** null: no limit. */
  message_content_delete_limit_seconds: nullable(null),
  /** null (or the legacy 0): no limit. */
  message_content_edit_limit_seconds: nullable(600),
  message_retention_days: -1,
  move_messages_between_streams_policy: 2 as number,
  name_changes_disabled: false,
  notifications_stream_id: -1,
  org_type: 0 as number,
  plan_type: 1,
  presence_disabled: false,
  private_message_policy: 1 as number,
  send_welcome_emails: true,
  signup_notifications_stream_id: -1,
  user_group_edit_policy: 1 as number,
  video_chat_provider: 1 as number,
  waiting_period_threshold: 0,
  want_advertise_in_communities_directory: false,
  wildcard_mention_policy: 5 as number,
  icon_source: 'G',
  logo_source: 'D',
  night_logo_source: 'D',
  default_external_accounts: {} as Record<string, unknown>,
};

export type RealmSettings = typeof REALM_SETTING_DEFAULTS;

/** A realm's stored settings over the defaults (a stored `undefined` reads as the default; `null` is a value). */
export function realmSettings(stored: Readonly<Record<string, unknown>>): RealmSettings & Record<string, unknown> {
  const out: Record<string, unknown> = { ...REALM_SETTING_DEFAULTS };
  for (const [k, v] of Object.entries(stored)) if (v !== undefined) out[k] = v;
  return out as RealmSettings & Record<string, unknown>;
}

/** Why a message may not be deleted (each has its Zulip message in the messages service). */
export type DeleteRefusal = 'not_allowed' | 'time_limit';

/**
 * Zulip's validate_can_delete_message: administrators delete any message at any time; others
 * only their own messages or their bots', when delete_own_message_policy admits them, and
 * within message_content_delete_limit_seconds (null: no limit) of sending.
 */
export function deleteMessageRefusal(
  user: PolicySubject & { id: number },
  message: { sender_id: number; sender_bot_owner_id: number | null; date_sent: Date },
  realm: Pick<RealmSettings, 'delete_own_message_policy' | 'message_content_delete_limit_seconds' | 'waiting_period_threshold'>,
  now = new Date(),
): DeleteRefusal | undefined {
  if (isAdminRole(user.role)) return undefined;
  if (message.sender_id !== user.id && message.sender_bot_owner_id !== user.id) return 'not_allowed';
  if (!hasPolicyPermission(user, realm.delete_own_message_policy, realm.waiting_period_threshold, now)) return 'not_allowed';
  const limit = realm.message_content_delete_limit_seconds;
  if (limit !== null && now.getTime() - message.date_sent.getTime() > limit * 1000) return 'time_limit';
  return undefined;
}

/**
 * Zulip's check_stream_access_for_delete_or_update at our feature level: only realm
 * administrators change or archive streams (a private stream they are not subscribed to too).
 */
export function canAdministerStreams(user: Pick<PolicySubject, 'role'>): boolean {
  return isAdminRole(user.role);
}

export * from './groups.js';

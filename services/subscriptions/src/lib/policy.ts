/**
 * Who may do what with streams, as pure functions of the user, the realm settings and the
 * stream. Zulip's rules at our spec's feature level: realm policies for creating streams
 * and subscribing others, and stream access by privacy, web-public status and subscription.
 */
import { Role } from '@zc/shared/contracts';

/** The parts of a user these rules look at. */
export interface Member {
  role: number;
  /** When the account was created; decides "full member" under waiting_period_threshold. */
  date_joined: Date;
}

/** The parts of a stream these rules look at. */
export interface StreamPrivacy {
  invite_only: boolean;
  is_web_public: boolean;
}

/** Zulip's realm policy values (Realm.POLICY_*). */
export const Policy = {
  MEMBERS_ONLY: 1,
  ADMINS_ONLY: 2,
  FULL_MEMBERS_ONLY: 3,
  MODERATORS_ONLY: 4,
  EVERYONE: 5,
  NOBODY: 6,
  OWNERS_ONLY: 7,
} as const;

const DAY_MS = 24 * 3600 * 1000;

export const isGuestRole = (role: number) => role >= Role.GUEST;
export const isAdminRole = (role: number) => role <= Role.ADMINISTRATOR;

/** Whether `user` is allowed by a realm policy value, given the realm's waiting period (days). */
export function hasPolicyPermission(user: Member, policy: number, waitingPeriodDays: number, now = new Date()): boolean {
  if (policy === Policy.NOBODY) return false;
  if (policy === Policy.EVERYONE) return true;
  if (user.role === Role.OWNER) return true;
  if (policy === Policy.OWNERS_ONLY) return false;
  if (user.role <= Role.ADMINISTRATOR) return true;
  if (policy === Policy.ADMINS_ONLY) return false;
  if (user.role <= Role.MODERATOR) return true;
  if (policy === Policy.MODERATORS_ONLY) return false;
  if (isGuestRole(user.role)) return false;
  if (policy === Policy.MEMBERS_ONLY) return true;
  // Full members: past the realm's waiting period.
  return now.getTime() - user.date_joined.getTime() >= waitingPeriodDays * DAY_MS;
}

/** Realm settings consulted here, as the users service publishes them (without `realm_`). */
export interface RealmPolicies {
  create_public_stream_policy: number;
  create_private_stream_policy: number;
  create_web_public_stream_policy: number;
  invite_to_stream_policy: number;
  waiting_period_threshold: number;
  enable_spectator_access: boolean;
}

export function canCreateStream(user: Member, realm: RealmPolicies, s: { invite_only: boolean; is_web_public: boolean }): boolean {
  if (isGuestRole(user.role)) return false;
  const policy = s.invite_only ? realm.create_private_stream_policy : realm.create_public_stream_policy;
  if (!hasPolicyPermission(user, policy, realm.waiting_period_threshold)) return false;
  return !s.is_web_public || hasPolicyPermission(user, realm.create_web_public_stream_policy, realm.waiting_period_threshold);
}

export function canSubscribeOthers(user: Member, realm: RealmPolicies): boolean {
  return !isGuestRole(user.role) && hasPolicyPermission(user, realm.invite_to_stream_policy, realm.waiting_period_threshold);
}

/**
 * Content access (Zulip's stream authorization): subscribers, anyone for web-public
 * streams, and non-guests for public streams. Administrators get no content access to
 * private streams they are not subscribed to.
 */
export function canAccessStream(role: number, stream: StreamPrivacy, subscribed: boolean): boolean {
  if (subscribed || stream.is_web_public) return true;
  return !stream.invite_only && !isGuestRole(role);
}

/** Metadata access: what can access the stream, plus administrators for private streams. */
export function canSeeStream(role: number, stream: StreamPrivacy, subscribed: boolean): boolean {
  return canAccessStream(role, stream, subscribed) || (stream.invite_only && isAdminRole(role));
}

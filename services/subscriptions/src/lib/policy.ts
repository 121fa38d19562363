/**
 * Who may do what with streams, as pure functions of the user, the realm settings and the
 * stream, over the realm-wide rules of @zc/shared/policy. Zulip's rules at our spec's feature
 * level: realm policies for creating streams and subscribing others, and stream access by
 * privacy, web-public status and subscription.
 */
import { hasPolicyPermission, isAdminRole, isGuestRole, type PolicySubject, type RealmSettings } from '@zc/shared/policy';

/** The parts of a stream these rules look at. */
export interface StreamPrivacy {
  invite_only: boolean;
  is_web_public: boolean;
}

/** Realm settings these rules read. */
type StreamPolicies = Pick<
  RealmSettings,
  'create_public_stream_policy' | 'create_private_stream_policy' | 'create_web_public_stream_policy' | 'invite_to_stream_policy' | 'waiting_period_threshold'
>;

export function canCreateStream(user: PolicySubject, realm: StreamPolicies, s: { invite_only: boolean; is_web_public: boolean }): boolean {
  if (isGuestRole(user.role)) return false;
  const policy = s.invite_only ? realm.create_private_stream_policy : realm.create_public_stream_policy;
  if (!hasPolicyPermission(user, policy, realm.waiting_period_threshold)) return false;
  return !s.is_web_public || hasPolicyPermission(user, realm.create_web_public_stream_policy, realm.waiting_period_threshold);
}

export function canSubscribeOthers(user: PolicySubject, realm: StreamPolicies): boolean {
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

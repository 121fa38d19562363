/**
 * A stream's access settings as a whole (Zulip's update_stream_backend at feature level 136
 * and later): the combination a PATCH asks for, checked against Zulip's rules, and the name
 * Zulip's notices give each combination. Pure.
 */
import { badRequest } from '@zc/shared/errors';

export interface StreamPermission {
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
}

export interface PermissionRequest {
  is_private?: boolean | undefined;
  is_web_public?: boolean | undefined;
  history_public_to_subscribers?: boolean | undefined;
}

/** Whether the request touches the stream's access settings at all. */
export const asksPermissionChange = (r: PermissionRequest): boolean =>
  r.is_private !== undefined || r.is_web_public !== undefined || r.history_public_to_subscribers !== undefined;

/**
 * The settings the stream would have. Unnamed ones keep their value, except that changing
 * privacy without naming the history setting takes the new privacy's default (public:
 * shared, private: protected). Web-public streams must be public with shared history, and
 * public streams must share history: otherwise "Invalid parameters", as Zulip answers.
 */
export function proposedPermission(current: StreamPermission, r: PermissionRequest): StreamPermission {
  const invite_only = r.is_private ?? current.invite_only;
  const is_web_public = r.is_web_public ?? current.is_web_public;
  const history_public_to_subscribers =
    r.history_public_to_subscribers ?? (r.is_private !== undefined ? !r.is_private : current.history_public_to_subscribers);
  if (is_web_public && (!history_public_to_subscribers || invite_only)) throw badRequest('Invalid parameters');
  if (!invite_only && !history_public_to_subscribers) throw badRequest('Invalid parameters');
  return { invite_only, is_web_public, history_public_to_subscribers };
}

export const samePermission = (a: StreamPermission, b: StreamPermission): boolean =>
  a.invite_only === b.invite_only && a.is_web_public === b.is_web_public && a.history_public_to_subscribers === b.history_public_to_subscribers;

/** Zulip's names of the access policies (Stream.PERMISSION_POLICIES), as its notices show them. */
export function permissionPolicyName(p: StreamPermission): string {
  if (p.is_web_public) return 'Web-public';
  if (!p.invite_only) return p.history_public_to_subscribers ? 'Public' : 'Public, protected history';
  return p.history_public_to_subscribers ? 'Private, shared history' : 'Private, protected history';
}

/**
 * Presence as clients see it (Zulip's zerver/lib/presence.py): the legacy format by email and
 * the `presence` event (the modern format by user id is in @zc/shared/presence, since the
 * gateway serves it too).
 * Since Zulip 7.0 the server keeps no per-client data, so the legacy format always names one
 * client, "website", with `aggregated` a copy of it.
 */
import { PRESENCE_TIMING } from '@zc/shared/contracts';
import { legacyClientPresence, type PresenceEntry } from '@zc/shared/presence';

export { legacyClientPresence, legacyPresence, type LegacyClientPresence } from '@zc/shared/presence';

/**
 * GET /users/{id}/presence's shape: both entries without `client`/`pushable`; `aggregated`
 * says "offline" once the newest ping is older than the offline threshold.
 */
export function singleUserPresence(e: PresenceEntry, nowSeconds: number): Record<string, { status: string; timestamp: number }> {
  const { status, timestamp } = legacyClientPresence(e);
  const offline = nowSeconds - timestamp > PRESENCE_TIMING.offlineThresholdSeconds;
  return { website: { status, timestamp }, aggregated: { status: offline ? 'offline' : status, timestamp } };
}

/** The `presence` client event (legacy format, as Zulip sends it to every client). */
export function presenceEvent(user: { user_id: number; email: string }, e: PresenceEntry, serverTimestamp: number): Record<string, unknown> {
  return { type: 'presence', user_id: user.user_id, email: user.email, server_timestamp: serverTimestamp, presence: { website: legacyClientPresence(e) } };
}

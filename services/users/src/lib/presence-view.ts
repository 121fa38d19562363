/**
 * Presence as clients see it (Zulip's zerver/lib/presence.py): the legacy format by email and
 * the `presence` event (the modern format by user id is in @zc/shared/presence, since the
 * gateway serves it too).
 * Since Zulip 7.0 the server keeps no per-client data, so the legacy format always names one
 * client, "website", with `aggregated` a copy of it.
 */
import { PRESENCE_TIMING } from '@zc/shared/contracts';
import type { PresenceEntry } from '@zc/shared/presence';

export interface LegacyClientPresence {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable: false;
}

/** Active when the last activity is close enough to the last connection (format_legacy_presence_dict). */
export function legacyClientPresence(e: PresenceEntry): LegacyClientPresence {
  const active = e.activeTs > 0 && e.activeTs + PRESENCE_TIMING.legacyActivityOffsetSeconds >= e.idleTs;
  return { client: 'website', status: active ? 'active' : 'idle', timestamp: active ? e.activeTs : e.idleTs, pushable: false };
}

export function legacyPresence(e: PresenceEntry): { aggregated: Omit<LegacyClientPresence, 'pushable'>; website: LegacyClientPresence } {
  const website = legacyClientPresence(e);
  return { aggregated: { client: website.client, status: website.status, timestamp: website.timestamp }, website };
}

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

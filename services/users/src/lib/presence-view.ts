/**
 * Presence as clients see it (Zulip's zerver/lib/presence.py): the modern format by user id
 * (`slim_presence` or `last_update_id`), the legacy one by email, and the `presence` event.
 * Since Zulip 7.0 the server keeps no per-client data, so the legacy format always names one
 * client, "website", with `aggregated` a copy of it.
 */
import { PRESENCE_TIMING } from '@zc/shared/contracts';
import type { PresenceEntry } from '../store/presence-store.js';

export interface ModernPresence {
  active_timestamp: number;
  idle_timestamp: number;
}

export interface LegacyClientPresence {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable: false;
}

export function modernPresence(e: PresenceEntry): ModernPresence {
  return { active_timestamp: e.activeTs, idle_timestamp: e.idleTs };
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

/**
 * Whether an entry belongs in a fetch: a client holding data (`lastUpdateId` > 0) gets what
 * changed since; otherwise what was seen within `historyLimitDays` (14 by default).
 */
export function inFetchWindow(e: PresenceEntry, nowSeconds: number, f: { lastUpdateId?: number; historyLimitDays?: number }): boolean {
  if (f.lastUpdateId !== undefined && f.lastUpdateId > 0) return e.updateId > f.lastUpdateId;
  const days = f.historyLimitDays ?? PRESENCE_TIMING.historyLimitDays;
  return e.idleTs >= nowSeconds - days * 86_400;
}

/**
 * What the server claims to be. Feature level 155 is the era of our spec: clients gate
 * behaviour on this number, so it must not promise API changes we have not built
 * (api-notes §6.3). The `zulip_*` aliases carry the same values.
 */
export const FEATURE_LEVEL = 155;
export const SERVER_VERSION = '6.2+zc';
export const MERGE_BASE = '6.2';

export function versionFields(): Record<string, unknown> {
  return {
    service_feature_level: FEATURE_LEVEL,
    service_version: SERVER_VERSION,
    service_merge_base: MERGE_BASE,
    zulip_feature_level: FEATURE_LEVEL,
    zulip_version: SERVER_VERSION,
    zulip_merge_base: MERGE_BASE,
  };
}

/** Limits from spec section 8 and Zulip's defaults, shared by every service that checks them. */
export const LIMITS = {
  maxMessageLength: 10000,
  maxTopicLength: 60,
  maxStreamNameLength: 60,
  maxStreamDescriptionLength: 1024,
  maxMessagesPerFetch: 5000,
} as const;

/**
 * Presence timing (Zulip's zproject settings), announced in /register and used by the users
 * service's presence rules: clients ping every `pingIntervalSeconds`; a user whose newest
 * ping is older than `offlineThresholdSeconds` is offline.
 */
export const PRESENCE_TIMING = {
  pingIntervalSeconds: 60,
  offlineThresholdSeconds: 200,
  /** A ping newer than this after the stored one changes nothing (PRESENCE_UPDATE_MIN_FREQ_SECONDS). */
  updateMinFrequencySeconds: 55,
  /** Legacy format: "active" when the last activity is at most this much older than the last ping. */
  legacyActivityOffsetSeconds: 70,
  /** Presence fetches look back this far unless the client asks otherwise (history_limit_days). */
  historyLimitDays: 14,
  /**
   * Realms with more active users than this get no live presence events (Zulip's
   * USER_LIMIT_FOR_SENDING_PRESENCE_UPDATE_EVENTS): the events are quadratic in the realm's
   * size, and clients poll presence every minute anyway.
   */
  maxUsersForPresenceEvents: 100,
} as const;

/** Typing notification timing (Zulip's TYPING_* settings), announced in /register. */
export const TYPING_TIMING = {
  /** Clients drop a typing indicator after this long without a new start; the server sends the stop then. */
  startedExpiryMs: 45_000,
  stoppedWaitMs: 12_000,
  startedWaitMs: 30_000,
  /** Streams with more subscribers get no typing events (Zulip's MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS). */
  maxStreamSizeForTypingNotifications: 100,
} as const;

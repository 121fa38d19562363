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

/**
 * What /register's initial state is made of (api-notes §2.1), as data: which service owns
 * which fetch types, and the empty value of every key real clients require, used when no
 * service provides it (yet). An owner adding a type adds it to its `types` here.
 */
import { drafts, messagesRpc, subscriptionsRpc, uploads, users, type RegisterStateReply, type RegisterStateRequest } from '@zc/shared/contracts';
import type { RpcContract } from '@zc/shared/bus';

export interface StateOwner {
  /** Service name, equal to the schema its outbox events carry as origin. */
  service: string;
  contract: RpcContract<typeof RegisterStateRequest, typeof RegisterStateReply>;
  /** Fetch types this owner answers; it is asked only when the fetch list names one of them. */
  types: readonly string[];
  /**
   * Whether /register fails (503) when the owner does not answer. An optional owner's keys
   * fall back to the empty defaults below: only for owners that are not deployed everywhere
   * yet, since a client would take the empty state for the truth.
   */
  required: boolean;
}

export const STATE_OWNERS: readonly StateOwner[] = [
  {
    service: 'users',
    contract: users.registerState,
    types: [
      'realm',
      'realm_user',
      'custom_profile_fields',
      'user_settings',
      'update_display_settings',
      'update_global_notifications',
      'realm_user_settings_defaults',
      'realm_user_groups',
      'alert_words',
      'muted_users',
      'realm_linkifiers',
      'realm_filters',
      'presence',
      'realm_bot',
      'user_status',
    ],
    required: true,
  },
  {
    service: 'subscriptions',
    contract: subscriptionsRpc.registerState,
    types: ['subscription', 'stream', 'user_topic', 'muted_topics', 'default_streams', 'default_stream_groups'],
    required: true,
  },
  {
    service: 'messages',
    contract: messagesRpc.registerState,
    types: ['message', 'update_message_flags', 'starred_messages', 'recent_private_conversations'],
    required: true,
  },
  { service: 'drafts', contract: drafts.registerState, types: ['drafts'], required: true },
  { service: 'uploads', contract: uploads.registerState, types: ['realm_emoji'], required: true },
];

const emptyUnreads = () => ({ count: 0, pms: [], streams: [], huddles: [], mentions: [], old_unreads_missing: false });

/**
 * Empty state per fetch type. zulip-flutter refuses a /register reply without several of
 * these keys (api-notes §5.1) even where we have nothing to put in them.
 */
const EMPTY_STATE: Record<string, (fetch: readonly string[]) => Record<string, unknown>> = {
  message: () => ({ max_message_id: -1 }),
  // Unread counts need both: without update_message_flags a client could not keep them.
  update_message_flags: (fetch) => (fetch.includes('message') ? { unread_msgs: emptyUnreads() } : {}),
  starred_messages: () => ({ starred_messages: [] }),
  recent_private_conversations: () => ({ recent_private_conversations: [] }),
  subscription: () => ({ subscriptions: [], unsubscribed: [], never_subscribed: [] }),
  stream: () => ({ streams: [] }),
  user_topic: () => ({ user_topics: [] }),
  muted_topics: () => ({ muted_topics: [] }),
  default_streams: () => ({ realm_default_streams: [] }),
  default_stream_groups: () => ({ realm_default_stream_groups: [] }),
  drafts: () => ({ drafts: [] }),
  alert_words: () => ({ alert_words: [] }),
  muted_users: () => ({ muted_users: [] }),
  // The right shapes with no data, for a fetch list without their owners' types.
  presence: () => ({ presences: {}, presence_last_update_id: -1, server_timestamp: Date.now() / 1000 }),
  realm_emoji: () => ({ realm_emoji: {} }),
  realm_user_groups: () => ({ realm_user_groups: [] }),
  realm_linkifiers: () => ({ realm_linkifiers: [] }),
  realm_filters: () => ({ realm_filters: [] }),
  realm_playgrounds: () => ({ realm_playgrounds: [] }),
  realm_domains: () => ({ realm_domains: [] }),
  realm_bot: () => ({ realm_bots: [] }),
  realm_embedded_bots: () => ({ realm_embedded_bots: [] }),
  realm_incoming_webhook_bots: () => ({ realm_incoming_webhook_bots: [] }),
  // Named onboarding_steps from FL 233; clients of our level ask for hotspots.
  hotspots: () => ({ hotspots: [] }),
  realm_user_settings_defaults: () => ({ realm_user_settings_defaults: {} }),
  user_status: () => ({ user_status: {} }),
  saved_snippets: () => ({ saved_snippets: [] }),
  scheduled_messages: () => ({ scheduled_messages: [] }),
  onboarding_steps: () => ({ onboarding_steps: [] }),
  video_calls: () => ({ has_zoom_token: false }),
  giphy: () => ({ giphy_api_key: '' }),
  stop_words: () => ({ stop_words: [] }),
};

/** Every fetch type we know: what an absent fetch_event_types/event_types means. */
export const ALL_FETCH_TYPES: readonly string[] = [...new Set([...STATE_OWNERS.flatMap((o) => o.types), ...Object.keys(EMPTY_STATE)])].filter(
  // Legacy keys that clients with user_settings_object do not want; asked for by name only.
  (t) => t !== 'update_display_settings' && t !== 'update_global_notifications',
);

/** The owners to ask for `fetch`. */
export function ownersFor(fetch: readonly string[]): StateOwner[] {
  return STATE_OWNERS.filter((o) => o.types.some((t) => fetch.includes(t)));
}

/** The empty keys of `fetch`, to be overwritten by what the owners return. */
export function emptyStateFor(fetch: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const t of fetch) Object.assign(out, EMPTY_STATE[t]?.(fetch));
  return out;
}

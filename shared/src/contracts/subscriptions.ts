/**
 * The subscriptions service: streams, subscriptions with personal settings, muted topics
 * (schema `subscriptions`). The domain events below feed other services' read models (the
 * messages service keeps streams and subscribers); `streamAccess` is their synchronous
 * fallback when a read model has not caught up yet (read your writes).
 */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { Actor, JsonObject, RegisterStateReply, RegisterStateRequest } from './common.js';

export const StreamRecord = Type.Object({
  stream_id: Type.Integer(),
  realm_id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  rendered_description: Type.String(),
  invite_only: Type.Boolean(),
  is_web_public: Type.Boolean(),
  history_public_to_subscribers: Type.Boolean(),
  /** 1 anyone, 2 administrators, 3 full members, 4 moderators. */
  stream_post_policy: Type.Integer(),
  /** null inherits the realm setting; -1 keeps forever. */
  message_retention_days: Type.Union([Type.Integer(), Type.Null()]),
  date_created: Type.Integer(),
  creator_id: Type.Union([Type.Integer(), Type.Null()]),
  can_remove_subscribers_group_id: Type.Integer(),
  is_archived: Type.Boolean(),
  /**
   * Grows with every change of the stream's row: a read model keeps the record with the
   * highest revision, so an older event delivered after a newer synchronous update
   * (`messagesRpc.syncStream`) cannot undo it. Absent in records from before it existed.
   */
  revision: Type.Optional(Type.Integer()),
});
export type StreamRecord = Static<typeof StreamRecord>;

export const SubscribersChange = Type.Object({
  realm_id: Type.Integer(),
  stream_id: Type.Integer(),
  user_ids: Type.Array(Type.Integer()),
});
export type SubscribersChange = Static<typeof SubscribersChange>;

export const SubscriptionPropertyChange = Type.Object({
  realm_id: Type.Integer(),
  stream_id: Type.Integer(),
  user_id: Type.Integer(),
  property: Type.String(),
  value: Type.Union([Type.Boolean(), Type.String(), Type.Null()]),
});

export const UserTopicChange = Type.Object({
  realm_id: Type.Integer(),
  user_id: Type.Integer(),
  stream_id: Type.Integer(),
  topic_name: Type.String(),
  /** 0 none, 1 muted, 2 unmuted, 3 followed. */
  visibility_policy: Type.Integer(),
  last_updated: Type.Integer(),
});

/** A stream was created with `announce`: the messages service has the notification bot post about it. */
export const StreamAnnouncement = Type.Object({
  realm_id: Type.Integer(),
  stream_id: Type.Integer(),
  stream_name: Type.String(),
  creator_id: Type.Integer(),
  invite_only: Type.Boolean(),
});
export type StreamAnnouncement = Static<typeof StreamAnnouncement>;

/**
 * A message the realm's notification bot posts on this service's behalf (Zulip's stream
 * change notices in "stream events", and "X subscribed you to ..." direct messages). The
 * messages service sends it once: `key` is its idempotency key.
 */
export const NotificationBotMessage = Type.Object({
  realm_id: Type.Integer(),
  key: Type.String(),
  /** Which system bot posts it (default the notification bot); the notification bot stands in where the realm has no Welcome Bot. */
  sender: Type.Optional(Type.Union([Type.Literal('notification-bot'), Type.Literal('welcome-bot')])),
  to: Type.Union([
    Type.Object({ type: Type.Literal('stream'), stream_id: Type.Integer(), topic: Type.String() }),
    Type.Object({ type: Type.Literal('private'), user_id: Type.Integer() }),
  ]),
  content: Type.String(),
});
export type NotificationBotMessage = Static<typeof NotificationBotMessage>;

export const subscriptionsEvents = {
  streamCreated: event('subscriptions.evt.v1.stream.created', StreamRecord),
  streamUpdated: event('subscriptions.evt.v1.stream.updated', StreamRecord),
  subscribersAdded: event('subscriptions.evt.v1.subscribers.added', SubscribersChange),
  subscribersRemoved: event('subscriptions.evt.v1.subscribers.removed', SubscribersChange),
  /** A personal setting changed (is_muted matters to unread totals elsewhere). */
  subscriptionUpdated: event('subscriptions.evt.v1.subscription.updated', SubscriptionPropertyChange),
  userTopicChanged: event('subscriptions.evt.v1.user_topic.changed', UserTopicChange),
  streamAnnounced: event('subscriptions.evt.v1.stream.announced', StreamAnnouncement),
  notificationBotMessage: event('subscriptions.evt.v1.notification_bot.message', NotificationBotMessage),
} as const;

export const StreamRef = Type.Union([Type.Object({ stream_id: Type.Integer() }), Type.Object({ name: Type.String() })]);

/** A user named in `principals`: a user id (preferred) or a display email (spec 4.6). */
const Principals = Type.Union([Type.Array(Type.Integer()), Type.Array(Type.String())]);

/** POST /users/me/subscriptions (spec 4.6); settings from invite_only on apply to created streams only. */
export const SubscribeRequest = Type.Object({
  actor: Actor,
  subscriptions: Type.Array(Type.Object({ name: Type.String(), description: Type.Optional(Type.String()), color: Type.Optional(Type.String()) })),
  principals: Type.Optional(Principals),
  authorization_errors_fatal: Type.Boolean(),
  announce: Type.Boolean(),
  invite_only: Type.Boolean(),
  is_web_public: Type.Boolean(),
  /** Absent: Zulip's default (true for public streams, false for private ones). */
  history_public_to_subscribers: Type.Optional(Type.Boolean()),
  stream_post_policy: Type.Optional(Type.Integer()),
  /** Deprecated alias of stream_post_policy = 2. */
  is_announcement_only: Type.Optional(Type.Boolean()),
  /** An integer, or `realm_default` / `unlimited` (`forever` before feature level 91). */
  message_retention_days: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
});
export type SubscribeRequest = Static<typeof SubscribeRequest>;

export const SubscribeReply = Type.Object({
  /** Keyed by the user's display email (spec 4.6; user ids only from feature level 289). */
  subscribed: Type.Record(Type.String(), Type.Array(Type.String())),
  already_subscribed: Type.Record(Type.String(), Type.Array(Type.String())),
  unauthorized: Type.Optional(Type.Array(Type.String())),
});
export type SubscribeReply = Static<typeof SubscribeReply>;

/**
 * PATCH /streams/{stream_id}: only the settings present change. Values are checked by the
 * service (Zulip's rules and messages); the gateway only decodes them.
 */
export const UpdateStreamRequest = Type.Object({
  actor: Actor,
  stream_id: Type.Integer(),
  description: Type.Optional(Type.String()),
  new_name: Type.Optional(Type.String()),
  is_private: Type.Optional(Type.Boolean()),
  is_web_public: Type.Optional(Type.Boolean()),
  history_public_to_subscribers: Type.Optional(Type.Boolean()),
  stream_post_policy: Type.Optional(Type.Integer()),
  /** Deprecated alias: true is stream_post_policy 2, false is 1. */
  is_announcement_only: Type.Optional(Type.Boolean()),
  message_retention_days: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  /** The id of a system group (Zulip 7.0's `can_remove_subscribers_group_id`). */
  can_remove_subscribers_group_id: Type.Optional(Type.Integer()),
});
export type UpdateStreamRequest = Static<typeof UpdateStreamRequest>;

const IncludeFlags = {
  include_public: Type.Boolean(),
  include_web_public: Type.Boolean(),
  include_subscribed: Type.Boolean(),
  include_all_active: Type.Boolean(),
  include_default: Type.Boolean(),
  include_owner_subscribed: Type.Boolean(),
};

export const subscriptionsRpc = {
  /**
   * A stream by id or name with the caller's relation to it, straight from the owner. Used
   * by other services when their read model does not know the stream or subscription yet.
   */
  streamAccess: rpc('subscriptions.v1.stream_access', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer(), stream: StreamRef }),
    reply: Type.Object({
      stream: Type.Union([StreamRecord, Type.Null()]),
      subscribed: Type.Boolean(),
      subscriber_ids: Type.Array(Type.Integer()),
    }),
  }),
  registerState: rpc('subscriptions.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply, safe: true }),
  subscribe: rpc('subscriptions.v1.subscribe', { request: SubscribeRequest, reply: SubscribeReply }),
  /** DELETE /users/me/subscriptions: `subscriptions` are stream names. */
  unsubscribe: rpc('subscriptions.v1.unsubscribe', {
    request: Type.Object({ actor: Actor, subscriptions: Type.Array(Type.String()), principals: Type.Optional(Principals) }),
    reply: Type.Object({ removed: Type.Array(Type.String()), not_removed: Type.Array(Type.String()) }),
  }),
  /** GET /users/me/subscriptions (spec 4.22). */
  listSubscriptions: rpc('subscriptions.v1.list_subscriptions', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, include_subscribers: Type.Boolean() }),
    reply: Type.Object({ subscriptions: Type.Array(JsonObject) }),
  }),
  /** POST /users/me/subscriptions/properties (spec 4.1); values are checked per property by the service. */
  updateProperties: rpc('subscriptions.v1.update_properties', {
    request: Type.Object({
      actor: Actor,
      subscription_data: Type.Array(Type.Object({ stream_id: Type.Integer(), property: Type.String(), value: Type.Union([Type.Boolean(), Type.String()]) })),
    }),
    reply: Type.Object({}),
  }),
  /** PATCH /users/me/subscriptions/muted_topics (spec 4.12). */
  updateMutedTopic: rpc('subscriptions.v1.update_muted_topic', {
    request: Type.Object({
      actor: Actor,
      stream_id: Type.Optional(Type.Integer()),
      stream: Type.Optional(Type.String()),
      topic: Type.String(),
      op: Type.Union([Type.Literal('add'), Type.Literal('remove')]),
    }),
    reply: Type.Object({}),
  }),
  /** GET /streams (spec 4.13). */
  listStreams: rpc('subscriptions.v1.list_streams', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, ...IncludeFlags }),
    reply: Type.Object({ streams: Type.Array(JsonObject) }),
  }),
  /** GET /streams/{stream_id}. */
  getStream: rpc('subscriptions.v1.get_stream', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({ stream: JsonObject }),
  }),
  /** GET /streams/{stream_id}/members: the subscribers' ids, for those who may see the stream. */
  streamMembers: rpc('subscriptions.v1.stream_members', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({ subscribers: Type.Array(Type.Integer()) }),
  }),
  /** GET /users/{user_id}/subscriptions/{stream_id}. */
  subscriptionStatus: rpc('subscriptions.v1.subscription_status', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, user_id: Type.Integer(), stream_id: Type.Integer() }),
    reply: Type.Object({ is_subscribed: Type.Boolean() }),
  }),
  /** PATCH /streams/{stream_id}. */
  updateStream: rpc('subscriptions.v1.update_stream', { request: UpdateStreamRequest, reply: Type.Object({}) }),
  /** DELETE /streams/{stream_id}: archives the stream (administrators only). */
  archiveStream: rpc('subscriptions.v1.archive_stream', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  /** POST /default_streams: makes a public stream one every new user joins (administrators only). */
  addDefaultStream: rpc('subscriptions.v1.add_default_stream', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  /** DELETE /default_streams: new users no longer join the stream (administrators only). */
  removeDefaultStream: rpc('subscriptions.v1.remove_default_stream', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  /** GET /get_stream_id?stream=NAME. */
  getStreamId: rpc('subscriptions.v1.get_stream_id', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, stream: Type.String() }),
    reply: Type.Object({ stream_id: Type.Integer() }),
  }),
} as const;

/**
 * What a null ("inherit") stream notification setting stands for, for clients without the
 * notification_settings_null capability: Zulip's defaults of the user-level settings
 * (enable_stream_*_notifications false, wildcard_mentions_notify true). Per-user values of
 * those settings are not yet consulted.
 */
export const INHERITED_NOTIFICATION_DEFAULTS: Readonly<Record<string, boolean>> = {
  desktop_notifications: false,
  audible_notifications: false,
  push_notifications: false,
  email_notifications: false,
  wildcard_mentions_notify: true,
};

/** A subscription object with inherited (null) notification settings replaced by their defaults. */
export function withInheritedNotificationSettings<T extends Record<string, unknown>>(sub: T): T {
  const out: Record<string, unknown> = { ...sub };
  for (const [k, v] of Object.entries(INHERITED_NOTIFICATION_DEFAULTS)) if (k in out && out[k] === null) out[k] = v;
  return out as T;
}

/**
 * The subscriptions service: streams, subscriptions with personal settings, muted topics
 * (schema `subscriptions`). The domain events below feed other services' read models (the
 * messages service keeps streams and subscribers); `streamAccess` is their synchronous
 * fallback when a read model has not caught up yet (read your writes).
 */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { RegisterStateReply, RegisterStateRequest } from './common.js';

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

export const subscriptionsEvents = {
  streamCreated: event('subscriptions.evt.v1.stream.created', StreamRecord),
  streamUpdated: event('subscriptions.evt.v1.stream.updated', StreamRecord),
  subscribersAdded: event('subscriptions.evt.v1.subscribers.added', SubscribersChange),
  subscribersRemoved: event('subscriptions.evt.v1.subscribers.removed', SubscribersChange),
  /** A personal setting changed (is_muted matters to unread totals elsewhere). */
  subscriptionUpdated: event('subscriptions.evt.v1.subscription.updated', SubscriptionPropertyChange),
  userTopicChanged: event('subscriptions.evt.v1.user_topic.changed', UserTopicChange),
} as const;

export const StreamRef = Type.Union([Type.Object({ stream_id: Type.Integer() }), Type.Object({ name: Type.String() })]);

export const subscriptionsRpc = {
  /**
   * A stream by id or name with the caller's relation to it, straight from the owner. Used
   * by other services when their read model does not know the stream or subscription yet.
   */
  streamAccess: rpc('subscriptions.v1.stream_access', {
    request: Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer(), stream: StreamRef }),
    reply: Type.Object({
      stream: Type.Union([StreamRecord, Type.Null()]),
      subscribed: Type.Boolean(),
      subscriber_ids: Type.Array(Type.Integer()),
    }),
  }),
  registerState: rpc('subscriptions.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply }),
} as const;

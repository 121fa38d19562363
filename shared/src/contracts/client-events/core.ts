/**
 * Client event schemas of messages, streams, subscriptions, users and realm settings
 * (api-notes §2.3, Zulip's event_types.py). Objects the events carry whole (a Message, a
 * stream, a subscription, a user) are checked for the fields clients rely on and may carry
 * more; the events' own fields are exact.
 */
import { Type, type TSchema } from '@sinclair/typebox';

const base = <T extends string>(type: T) => ({ id: Type.Integer(), type: Type.Literal(type) });
const strict = { additionalProperties: false } as const;
const ids = Type.Array(Type.Integer());
const opt = Type.Optional;

const Message = Type.Object({
  id: Type.Integer(),
  sender_id: Type.Integer(),
  sender_email: Type.String(),
  sender_full_name: Type.String(),
  content: Type.String(),
  content_type: Type.String(),
  recipient_id: Type.Integer(),
  type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
  subject: Type.String(),
  timestamp: Type.Integer(),
});
const TopicLink = Type.Object({ text: Type.String(), url: Type.String() }, strict);

export const MessageEvent = Type.Object({ ...base('message'), message: Message, flags: Type.Array(Type.String()), local_message_id: opt(Type.String()) }, strict);

export const UpdateMessageEvent = Type.Object(
  {
    ...base('update_message'),
    user_id: Type.Union([Type.Integer(), Type.Null()]),
    rendering_only: Type.Boolean(),
    message_id: Type.Integer(),
    message_ids: ids,
    flags: Type.Array(Type.String()),
    edit_timestamp: Type.Integer(),
    stream_name: opt(Type.String()),
    stream_id: opt(Type.Integer()),
    new_stream_id: opt(Type.Integer()),
    propagate_mode: opt(Type.Union([Type.Literal('change_one'), Type.Literal('change_later'), Type.Literal('change_all')])),
    orig_subject: opt(Type.String()),
    subject: opt(Type.String()),
    topic_links: opt(Type.Array(TopicLink)),
    orig_content: opt(Type.String()),
    orig_rendered_content: opt(Type.String()),
    prev_rendered_content_version: opt(Type.Integer()),
    content: opt(Type.String()),
    rendered_content: opt(Type.String()),
    is_me_message: opt(Type.Boolean()),
  },
  strict,
);

export const DeleteMessageEvent = Type.Object(
  {
    ...base('delete_message'),
    message_type: Type.Union([Type.Literal('private'), Type.Literal('stream')]),
    message_ids: opt(ids),
    message_id: opt(Type.Integer()),
    stream_id: opt(Type.Integer()),
    topic: opt(Type.String()),
  },
  strict,
);

const flagsFields = { operation: Type.String(), flag: Type.String(), messages: ids, all: Type.Boolean() };
export const UpdateMessageFlagsAddEvent = Type.Object({ ...base('update_message_flags'), op: Type.Literal('add'), ...flagsFields }, strict);
export const UpdateMessageFlagsRemoveEvent = Type.Object(
  {
    ...base('update_message_flags'),
    op: Type.Literal('remove'),
    ...flagsFields,
    message_details: opt(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            type: Type.Union([Type.Literal('private'), Type.Literal('stream')]),
            mentioned: opt(Type.Boolean()),
            user_ids: opt(ids),
            stream_id: opt(Type.Integer()),
            topic: opt(Type.String()),
            unmuted_stream_msg: opt(Type.Boolean()),
          },
          strict,
        ),
      ),
    ),
  },
  strict,
);

const Stream = Type.Object({ stream_id: Type.Integer(), name: Type.String(), invite_only: Type.Boolean(), is_web_public: Type.Boolean() });
export const StreamCreateEvent = Type.Object({ ...base('stream'), op: Type.Literal('create'), streams: Type.Array(Stream) }, strict);
export const StreamDeleteEvent = Type.Object(
  { ...base('stream'), op: Type.Literal('delete'), streams: Type.Array(Type.Object({ stream_id: Type.Integer() })), stream_ids: opt(ids) },
  strict,
);
export const StreamUpdateEvent = Type.Object(
  {
    ...base('stream'),
    op: Type.Literal('update'),
    stream_id: Type.Integer(),
    name: Type.String(),
    property: Type.String(),
    value: Type.Unknown(),
    rendered_description: opt(Type.String()),
    history_public_to_subscribers: opt(Type.Boolean()),
    is_web_public: opt(Type.Boolean()),
  },
  strict,
);
/** The realm's default streams, whole (Zulip's do_remove_default_stream and friends). */
export const DefaultStreamsEvent = Type.Object({ ...base('default_streams'), default_streams: Type.Array(Stream) }, strict);

const Subscription = Type.Object({ stream_id: Type.Integer(), name: Type.String(), color: Type.String() });
export const SubscriptionAddEvent = Type.Object({ ...base('subscription'), op: Type.Literal('add'), subscriptions: Type.Array(Subscription) }, strict);
export const SubscriptionRemoveEvent = Type.Object(
  { ...base('subscription'), op: Type.Literal('remove'), subscriptions: Type.Array(Type.Object({ stream_id: Type.Integer(), name: Type.String() }, strict)) },
  strict,
);
export const SubscriptionUpdateEvent = Type.Object(
  { ...base('subscription'), op: Type.Literal('update'), stream_id: Type.Integer(), property: Type.String(), value: Type.Union([Type.Integer(), Type.Boolean(), Type.String(), Type.Null()]) },
  strict,
);
const peerEvent = <Op extends 'peer_add' | 'peer_remove'>(op: Op) => Type.Object({ ...base('subscription'), op: Type.Literal(op), stream_ids: ids, user_ids: ids }, strict);
export const SubscriptionPeerAddEvent = peerEvent('peer_add');
export const SubscriptionPeerRemoveEvent = peerEvent('peer_remove');

export const UserTopicEvent = Type.Object(
  { ...base('user_topic'), stream_id: Type.Integer(), topic_name: Type.String(), last_updated: Type.Integer(), visibility_policy: Type.Integer() },
  strict,
);
export const MutedTopicsEvent = Type.Object({ ...base('muted_topics'), muted_topics: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Integer()])) }, strict);

const Person = Type.Object({ user_id: Type.Integer(), email: Type.String(), full_name: Type.String(), role: Type.Integer(), is_bot: Type.Boolean(), is_active: Type.Boolean() });
export const RealmUserAddEvent = Type.Object({ ...base('realm_user'), op: Type.Literal('add'), person: Person }, strict);
export const RealmUserRemoveEvent = Type.Object(
  { ...base('realm_user'), op: Type.Literal('remove'), person: Type.Object({ user_id: Type.Integer(), full_name: Type.String() }, strict) },
  strict,
);
/** One changed property (or group of properties) per event; `person` always names the user. */
export const RealmUserUpdateEvent = Type.Object({ ...base('realm_user'), op: Type.Literal('update'), person: Type.Object({ user_id: Type.Integer() }) }, strict);

export const RealmLinkifiersEvent = Type.Object(
  { ...base('realm_linkifiers'), realm_linkifiers: Type.Array(Type.Object({ id: Type.Integer(), pattern: Type.String(), url_template: Type.String() }, strict)) },
  strict,
);
export const RealmFiltersEvent = Type.Object({ ...base('realm_filters'), realm_filters: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Integer()])) }, strict);
export const AlertWordsEvent = Type.Object({ ...base('alert_words'), alert_words: Type.Array(Type.String()) }, strict);
export const RealmPlaygroundsEvent = Type.Object(
  {
    ...base('realm_playgrounds'),
    realm_playgrounds: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), pygments_language: Type.String(), url_prefix: Type.String() }, strict)),
  },
  strict,
);
export const RealmUserSettingsDefaultsEvent = Type.Object(
  { ...base('realm_user_settings_defaults'), op: Type.Literal('update'), property: Type.String(), value: Type.Union([Type.String(), Type.Integer(), Type.Boolean()]) },
  strict,
);
export const MutedUsersEvent = Type.Object(
  { ...base('muted_users'), muted_users: Type.Array(Type.Object({ id: Type.Integer(), timestamp: Type.Integer() }, strict)) },
  strict,
);

export const CORE_EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = {
  message: MessageEvent,
  update_message: UpdateMessageEvent,
  delete_message: DeleteMessageEvent,
  'update_message_flags/add': UpdateMessageFlagsAddEvent,
  'update_message_flags/remove': UpdateMessageFlagsRemoveEvent,
  'stream/create': StreamCreateEvent,
  'stream/delete': StreamDeleteEvent,
  'stream/update': StreamUpdateEvent,
  default_streams: DefaultStreamsEvent,
  'subscription/add': SubscriptionAddEvent,
  'subscription/remove': SubscriptionRemoveEvent,
  'subscription/update': SubscriptionUpdateEvent,
  'subscription/peer_add': SubscriptionPeerAddEvent,
  'subscription/peer_remove': SubscriptionPeerRemoveEvent,
  user_topic: UserTopicEvent,
  muted_topics: MutedTopicsEvent,
  'realm_user/add': RealmUserAddEvent,
  'realm_user/remove': RealmUserRemoveEvent,
  'realm_user/update': RealmUserUpdateEvent,
  realm_linkifiers: RealmLinkifiersEvent,
  realm_filters: RealmFiltersEvent,
  alert_words: AlertWordsEvent,
  muted_users: MutedUsersEvent,
  'realm_user_settings_defaults/update': RealmUserSettingsDefaultsEvent,
  realm_playgrounds: RealmPlaygroundsEvent,
};

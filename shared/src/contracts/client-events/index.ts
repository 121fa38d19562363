/**
 * Client event schemas, one per (type, op), as Zulip's event_types.py types them: what a
 * queue delivers, with its `id`. Producers build these events; tests check what queues
 * receive against them. Add a type's schemas here when its producer lands.
 * Imported as `@zc/shared/contracts/client-events`.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Draft } from '../drafts.js';
import { Attachment, RealmEmoji } from '../uploads.js';
import { CORE_EVENT_SCHEMAS } from './core.js';
import { USER_GROUP_EVENT_SCHEMAS } from './user-groups.js';
import { PEOPLE_EVENT_SCHEMAS } from './people.js';

export * from './core.js';
export * from './user-groups.js';

const base = <T extends string>(type: T) => ({ id: Type.Integer(), type: Type.Literal(type) });
const strict = { additionalProperties: false } as const;

export const DraftsAddEvent = Type.Object({ ...base('drafts'), op: Type.Literal('add'), drafts: Type.Array(Draft) }, strict);
export const DraftsUpdateEvent = Type.Object({ ...base('drafts'), op: Type.Literal('update'), draft: Draft }, strict);
export const DraftsRemoveEvent = Type.Object({ ...base('drafts'), op: Type.Literal('remove'), draft_id: Type.Integer() }, strict);
export const HeartbeatEvent = Type.Object(base('heartbeat'), strict);

const SettingValue = Type.Union([Type.Boolean(), Type.Integer(), Type.String()]);
/** A personal setting changed (FL 89+); `language_name` only for default_language. */
export const UserSettingsUpdateEvent = Type.Object(
  { ...base('user_settings'), op: Type.Literal('update'), property: Type.String(), value: SettingValue, language_name: Type.Optional(Type.String()) },
  strict,
);
/** The pre-FL-89 form of a display setting change, for queues without user_settings_object. */
export const UpdateDisplaySettingsEvent = Type.Object(
  { ...base('update_display_settings'), user: Type.String(), setting_name: Type.String(), setting: SettingValue, language_name: Type.Optional(Type.String()) },
  strict,
);
/** The pre-FL-89 form of a notification setting change. */
export const UpdateGlobalNotificationsEvent = Type.Object(
  { ...base('update_global_notifications'), user: Type.String(), notification_name: Type.String(), setting: SettingValue },
  strict,
);
/** An organisation setting changed. */
export const RealmUpdateEvent = Type.Object(
  { ...base('realm'), op: Type.Literal('update'), property: Type.String(), value: Type.Union([SettingValue, Type.Null()]) },
  strict,
);
/** The organisation was deactivated (Zulip's do_deactivate_realm): clients show that it is gone. */
export const RealmDeactivatedEvent = Type.Object({ ...base('realm'), op: Type.Literal('deactivated'), realm_id: Type.Integer() }, strict);
/** Organisation settings changed, in the form used for coupled settings (`property` is always "default"). */
export const RealmUpdateDictEvent = Type.Object(
  { ...base('realm'), op: Type.Literal('update_dict'), property: Type.Literal('default'), data: Type.Record(Type.String(), Type.Unknown()) },
  strict,
);

const LegacyClientPresence = Type.Object(
  { client: Type.String(), status: Type.Union([Type.Literal('active'), Type.Literal('idle')]), timestamp: Type.Integer(), pushable: Type.Boolean() },
  strict,
);
/** A user came online (Zulip sends the legacy per-client format, always the one "website" client). */
export const PresenceEvent = Type.Object(
  { ...base('presence'), user_id: Type.Integer(), email: Type.String(), server_timestamp: Type.Number(), presence: Type.Record(Type.String(), LegacyClientPresence) },
  strict,
);

const TypingUser = Type.Object({ user_id: Type.Integer(), email: Type.String() }, strict);
/**
 * Typing start/stop. `message_type` is "private" for direct messages at our feature level
 * (Zulip renamed it "direct" at 215); direct ones name every recipient, the sender included,
 * stream ones the stream and topic.
 */
const typingEvent = <Op extends 'start' | 'stop'>(op: Op) =>
  Type.Union([
    Type.Object({ ...base('typing'), op: Type.Literal(op), message_type: Type.Literal('private'), sender: TypingUser, recipients: Type.Array(TypingUser) }, strict),
    Type.Object({ ...base('typing'), op: Type.Literal(op), message_type: Type.Literal('stream'), sender: TypingUser, stream_id: Type.Integer(), topic: Type.String() }, strict),
  ]);
export const TypingStartEvent = typingEvent('start');
export const TypingStopEvent = typingEvent('stop');
const reactionFields = {
  message_id: Type.Integer(),
  user_id: Type.Integer(),
  /** Deprecated, still sent at our feature level (Zulip dropped it at 328). */
  user: Type.Object({ user_id: Type.Integer(), email: Type.String(), full_name: Type.String() }, strict),
  emoji_name: Type.String(),
  emoji_code: Type.String(),
  reaction_type: Type.Union([Type.Literal('unicode_emoji'), Type.Literal('realm_emoji'), Type.Literal('zulip_extra_emoji')]),
};
export const ReactionAddEvent = Type.Object({ ...base('reaction'), op: Type.Literal('add'), ...reactionFields }, strict);
export const ReactionRemoveEvent = Type.Object({ ...base('reaction'), op: Type.Literal('remove'), ...reactionFields }, strict);

/** A submessage added to a widget message (POST /submessage): a poll vote, a todo task. */
export const SubmessageEvent = Type.Object(
  { ...base('submessage'), msg_type: Type.String(), content: Type.String(), message_id: Type.Integer(), sender_id: Type.Integer(), submessage_id: Type.Integer() },
  strict,
);

/** Zulip's `attachment` events, to the owner only, with the realm's space used in bytes. */
export const AttachmentAddEvent = Type.Object({ ...base('attachment'), op: Type.Literal('add'), attachment: Attachment, upload_space_used: Type.Integer() }, strict);
export const AttachmentUpdateEvent = Type.Object({ ...base('attachment'), op: Type.Literal('update'), attachment: Attachment, upload_space_used: Type.Integer() }, strict);
export const AttachmentRemoveEvent = Type.Object(
  { ...base('attachment'), op: Type.Literal('remove'), attachment: Type.Object({ id: Type.Integer() }, strict), upload_space_used: Type.Integer() },
  strict,
);

/** The realm's custom emoji changed: the whole set, deactivated ones included, keyed by id (to every active user). */
export const RealmEmojiUpdateEvent = Type.Object({ ...base('realm_emoji'), op: Type.Literal('update'), realm_emoji: Type.Record(Type.String(), RealmEmoji) }, strict);

export type DraftsAddEvent = Static<typeof DraftsAddEvent>;
export type DraftsUpdateEvent = Static<typeof DraftsUpdateEvent>;
export type DraftsRemoveEvent = Static<typeof DraftsRemoveEvent>;
export type HeartbeatEvent = Static<typeof HeartbeatEvent>;
export type PresenceEvent = Static<typeof PresenceEvent>;
export type TypingStartEvent = Static<typeof TypingStartEvent>;
export type TypingStopEvent = Static<typeof TypingStopEvent>;
export type ReactionAddEvent = Static<typeof ReactionAddEvent>;
export type ReactionRemoveEvent = Static<typeof ReactionRemoveEvent>;
export type SubmessageEvent = Static<typeof SubmessageEvent>;

/** Schemas by `type` or `type/op`, for checking any delivered event. */
export const CLIENT_EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = {
  ...CORE_EVENT_SCHEMAS,
  ...USER_GROUP_EVENT_SCHEMAS,
  ...PEOPLE_EVENT_SCHEMAS,
  'drafts/add': DraftsAddEvent,
  'drafts/update': DraftsUpdateEvent,
  'drafts/remove': DraftsRemoveEvent,
  heartbeat: HeartbeatEvent,
  'user_settings/update': UserSettingsUpdateEvent,
  update_display_settings: UpdateDisplaySettingsEvent,
  update_global_notifications: UpdateGlobalNotificationsEvent,
  'realm/update': RealmUpdateEvent,
  'realm/update_dict': RealmUpdateDictEvent,
  'realm/deactivated': RealmDeactivatedEvent,
  presence: PresenceEvent,
  'typing/start': TypingStartEvent,
  'typing/stop': TypingStopEvent,
  'reaction/add': ReactionAddEvent,
  'reaction/remove': ReactionRemoveEvent,
  submessage: SubmessageEvent,
  'attachment/add': AttachmentAddEvent,
  'attachment/update': AttachmentUpdateEvent,
  'attachment/remove': AttachmentRemoveEvent,
  'realm_emoji/update': RealmEmojiUpdateEvent,
};

/** The schema for an event, if one is declared (`type/op` first, then `type`). */
export function clientEventSchema(event: { type: string; op?: unknown }): TSchema | undefined {
  return CLIENT_EVENT_SCHEMAS[`${event.type}/${String(event.op)}`] ?? CLIENT_EVENT_SCHEMAS[event.type];
}

/**
 * Client event schemas of people administration (Zulip's event_types.py): bots as their
 * administrators see them, custom profile field definitions, and user statuses.
 */
import { Type, type TSchema } from '@sinclair/typebox';

const base = <T extends string>(type: T) => ({ id: Type.Integer(), type: Type.Literal(type) });
const strict = { additionalProperties: false } as const;
const opt = Type.Optional;

const Bot = Type.Object(
  {
    email: Type.String(),
    user_id: Type.Integer(),
    full_name: Type.String(),
    bot_type: Type.Union([Type.Integer(), Type.Null()]),
    is_active: Type.Boolean(),
    api_key: Type.String(),
    default_sending_stream: Type.Union([Type.String(), Type.Null()]),
    default_events_register_stream: Type.Union([Type.String(), Type.Null()]),
    default_all_public_streams: Type.Boolean(),
    avatar_url: Type.String(),
    services: Type.Array(Type.Unknown()),
    owner_id: Type.Union([Type.Integer(), Type.Null()]),
  },
  strict,
);
export const RealmBotAddEvent = Type.Object({ ...base('realm_bot'), op: Type.Literal('add'), bot: Bot }, strict);
/** The bot's id and the properties that changed. */
export const RealmBotUpdateEvent = Type.Object(
  { ...base('realm_bot'), op: Type.Literal('update'), bot: Type.Object({ user_id: Type.Integer(), full_name: opt(Type.String()), owner_id: opt(Type.Integer()) }, strict) },
  strict,
);
export const RealmBotRemoveEvent = Type.Object(
  { ...base('realm_bot'), op: Type.Literal('remove'), bot: Type.Object({ user_id: Type.Integer(), full_name: Type.String() }, strict) },
  strict,
);

export const CustomProfileField = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    type: Type.Integer(),
    hint: Type.String(),
    field_data: Type.String(),
    order: Type.Integer(),
    required: Type.Boolean(),
    editable_by_user: Type.Boolean(),
    display_in_profile_summary: opt(Type.Literal(true)),
  },
  strict,
);
export const CustomProfileFieldsEvent = Type.Object({ ...base('custom_profile_fields'), fields: Type.Array(CustomProfileField) }, strict);

export const UserStatusEvent = Type.Object(
  {
    ...base('user_status'),
    user_id: Type.Integer(),
    away: opt(Type.Boolean()),
    status_text: opt(Type.String()),
    emoji_name: opt(Type.String()),
    emoji_code: opt(Type.String()),
    reaction_type: opt(Type.Union([Type.Literal('unicode_emoji'), Type.Literal('realm_emoji'), Type.Literal('zulip_extra_emoji')])),
  },
  strict,
);

export const PEOPLE_EVENT_SCHEMAS: Readonly<Record<string, TSchema>> = {
  'realm_bot/add': RealmBotAddEvent,
  'realm_bot/update': RealmBotUpdateEvent,
  'realm_bot/remove': RealmBotRemoveEvent,
  custom_profile_fields: CustomProfileFieldsEvent,
  user_status: UserStatusEvent,
};

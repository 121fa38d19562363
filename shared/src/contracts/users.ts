/** The users service: realms, users, credentials, custom profile fields (schema `users`). */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { Actor, JsonObject, RegisterStateReply, RegisterStateRequest } from './common.js';

/**
 * A user as other services keep it in their read models. `email` is the display email
 * everyone may see (the real one, or a fake `user<id>@<host>` when the realm limits email
 * visibility); `delivery_email` is the real address.
 */
export const UserRecord = Type.Object({
  user_id: Type.Integer(),
  realm_id: Type.Integer(),
  email: Type.String(),
  delivery_email: Type.String(),
  full_name: Type.String(),
  role: Type.Integer(),
  is_active: Type.Boolean(),
  is_bot: Type.Boolean(),
  /** The notification bot and its kind: listed as cross-realm bots, never among "everyone". */
  is_system_bot: Type.Optional(Type.Boolean()),
  bot_type: Type.Union([Type.Integer(), Type.Null()]),
  bot_owner_id: Type.Union([Type.Integer(), Type.Null()]),
  timezone: Type.String(),
  avatar_source: Type.String(),
  avatar_version: Type.Integer(),
  date_joined: Type.String(),
});
export type UserRecord = Static<typeof UserRecord>;

export const RealmRecord = Type.Object({
  realm_id: Type.Integer(),
  subdomain: Type.String(),
  name: Type.String(),
  description: Type.String(),
  deactivated: Type.Boolean(),
  url: Type.String(),
  /** Realm settings with their `realm_` names stripped, e.g. `waiting_period_threshold`. */
  settings: JsonObject,
  date_created: Type.Integer(),
  /** The realm's change counter (see Actor.realm_revision); absent from records published before it existed. */
  revision: Type.Optional(Type.Integer()),
});
export type RealmRecord = Static<typeof RealmRecord>;

/**
 * When the user last turned `enable_drafts_synchronization` off (PostgreSQL timestamptz text,
 * microseconds kept), or null. Zulip deletes the user's drafts at that moment; the drafts
 * service deletes every draft it created before this instant, whether it hears of it through
 * `userSettingsChanged` or through `users.userSettings` on the user's next drafts call.
 */
export const DraftsClearedAt = Type.Union([Type.String(), Type.Null()]);

/**
 * A user's personal settings at our feature level (Zulip's UserProfile.property_types at
 * FL 155, with that era's names: `default_view`, `escape_navigates_to_default_view`,
 * `dense_mode`, `realm_name_in_notifications`), plus `timezone`. The whole object travels in
 * `userSettingsChanged` and `users.userSettings`, so services acting on a setting read it here.
 */
export const UserSettings = Type.Object({
  twenty_four_hour_time: Type.Boolean(),
  dense_mode: Type.Boolean(),
  starred_message_counts: Type.Boolean(),
  fluid_layout_width: Type.Boolean(),
  high_contrast_mode: Type.Boolean(),
  color_scheme: Type.Integer(),
  translate_emoticons: Type.Boolean(),
  display_emoji_reaction_users: Type.Boolean(),
  default_language: Type.String(),
  default_view: Type.String(),
  escape_navigates_to_default_view: Type.Boolean(),
  left_side_userlist: Type.Boolean(),
  emojiset: Type.String(),
  demote_inactive_streams: Type.Integer(),
  user_list_style: Type.Integer(),
  timezone: Type.String(),
  enter_sends: Type.Boolean(),
  enable_drafts_synchronization: Type.Boolean(),
  enable_stream_desktop_notifications: Type.Boolean(),
  enable_stream_email_notifications: Type.Boolean(),
  enable_stream_push_notifications: Type.Boolean(),
  enable_stream_audible_notifications: Type.Boolean(),
  notification_sound: Type.String(),
  enable_desktop_notifications: Type.Boolean(),
  enable_sounds: Type.Boolean(),
  email_notifications_batching_period_seconds: Type.Integer(),
  enable_offline_email_notifications: Type.Boolean(),
  enable_offline_push_notifications: Type.Boolean(),
  enable_online_push_notifications: Type.Boolean(),
  enable_digest_emails: Type.Boolean(),
  enable_marketing_emails: Type.Boolean(),
  enable_login_emails: Type.Boolean(),
  message_content_in_email_notifications: Type.Boolean(),
  pm_content_in_desktop_notifications: Type.Boolean(),
  wildcard_mentions_notify: Type.Boolean(),
  desktop_icon_count_display: Type.Integer(),
  realm_name_in_notifications: Type.Boolean(),
  presence_enabled: Type.Boolean(),
  send_private_typing_notifications: Type.Boolean(),
  send_stream_typing_notifications: Type.Boolean(),
  send_read_receipts: Type.Boolean(),
});
export type UserSettings = Static<typeof UserSettings>;
export type UserSettingName = keyof UserSettings;

/**
 * Organisation settings as PATCH /realm takes them (Zulip's update_realm at FL 155), decoded
 * but not yet checked. The time limits and retention take an integer or a word
 * (`unlimited`, `forever`); `notifications_stream_id` etc. -1 for none.
 */
export const RealmSettingsPatch = Type.Partial(
  Type.Object({
    name: Type.String(),
    description: Type.String(),
    emails_restricted_to_domains: Type.Boolean(),
    disallow_disposable_email_addresses: Type.Boolean(),
    invite_required: Type.Boolean(),
    invite_to_realm_policy: Type.Integer(),
    name_changes_disabled: Type.Boolean(),
    email_changes_disabled: Type.Boolean(),
    avatar_changes_disabled: Type.Boolean(),
    inline_image_preview: Type.Boolean(),
    inline_url_embed_preview: Type.Boolean(),
    add_custom_emoji_policy: Type.Integer(),
    delete_own_message_policy: Type.Integer(),
    message_content_delete_limit_seconds: Type.Union([Type.Integer(), Type.String()]),
    allow_message_editing: Type.Boolean(),
    edit_topic_policy: Type.Integer(),
    mandatory_topics: Type.Boolean(),
    message_content_edit_limit_seconds: Type.Union([Type.Integer(), Type.String()]),
    allow_edit_history: Type.Boolean(),
    default_language: Type.String(),
    waiting_period_threshold: Type.Integer(),
    authentication_methods: JsonObject,
    notifications_stream_id: Type.Integer(),
    signup_notifications_stream_id: Type.Integer(),
    message_retention_days: Type.Union([Type.Integer(), Type.String()]),
    send_welcome_emails: Type.Boolean(),
    digest_emails_enabled: Type.Boolean(),
    message_content_allowed_in_email_notifications: Type.Boolean(),
    bot_creation_policy: Type.Integer(),
    create_public_stream_policy: Type.Integer(),
    create_private_stream_policy: Type.Integer(),
    create_web_public_stream_policy: Type.Integer(),
    invite_to_stream_policy: Type.Integer(),
    move_messages_between_streams_policy: Type.Integer(),
    user_group_edit_policy: Type.Integer(),
    private_message_policy: Type.Integer(),
    wildcard_mention_policy: Type.Integer(),
    video_chat_provider: Type.Integer(),
    giphy_rating: Type.Integer(),
    default_code_block_language: Type.String(),
    digest_weekday: Type.Integer(),
    enable_spectator_access: Type.Boolean(),
    want_advertise_in_communities_directory: Type.Boolean(),
    enable_read_receipts: Type.Boolean(),
    org_type: Type.Integer(),
  }),
);
export type RealmSettingsPatch = Static<typeof RealmSettingsPatch>;

const ViewOptions = {
  client_gravatar: Type.Boolean(),
  include_custom_profile_fields: Type.Boolean(),
};

export const MutedUserChange = Type.Object({
  realm_id: Type.Integer(),
  user_id: Type.Integer(),
  muted_user_id: Type.Integer(),
  muted: Type.Boolean(),
  revision: Type.Integer(),
});
export type MutedUserChange = Static<typeof MutedUserChange>;

export const Linkifier = Type.Object({
  id: Type.Integer(),
  pattern: Type.String(),
  url_template: Type.String(),
});
export type Linkifier = Static<typeof Linkifier>;

const LinkifierInput = {
  actor: Actor,
  pattern: Type.String(),
  /** RFC 6570 template (FL 176+) or, from older clients, the legacy `%(name)s` format string. */
  url_template: Type.Optional(Type.String()),
  url_format_string: Type.Optional(Type.String()),
};

/** One custom profile value as clients send it: text, a person picker's user ids, or null (remove). */
export const ProfileDataEntry = Type.Object({
  id: Type.Integer(),
  value: Type.Union([Type.String(), Type.Array(Type.Integer()), Type.Null()]),
});
export type ProfileDataEntry = Static<typeof ProfileDataEntry>;

/** What a presence fetch asks for (POST /users/me/presence, GET /realm/presence, /register). */
const PresenceFetch = {
  slim_presence: Type.Boolean(),
  /** Only users whose presence changed after this id (modern format); -1 or absent: everything. */
  last_update_id: Type.Optional(Type.Integer()),
  /** How far back to look (default PRESENCE_TIMING.historyLimitDays). */
  history_limit_days: Type.Optional(Type.Integer()),
};

export const users = {
  /**
   * Basic-auth check for the gateway; errors are 401 with Zulip's codes. `credential_tokens`
   * are the user's and realm's credential tokens (shared redis/credentials.ts) read before
   * the row that was checked, so a gateway caching the actor under them re-checks it after
   * any later revocation.
   */
  authenticate: rpc('users.v1.authenticate', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_subdomain: Type.String(), email: Type.String(), api_key: Type.String() }),
    reply: Type.Object({
      actor: Actor,
      realm_deactivated: Type.Boolean(),
      credential_tokens: Type.Object({ user: Type.Union([Type.String(), Type.Null()]), realm: Type.Union([Type.String(), Type.Null()]) }),
    }),
  }),
  serverSettings: rpc('users.v1.server_settings', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_subdomain: Type.String(), client_name: Type.String() }),
    reply: JsonObject,
  }),
  fetchApiKey: rpc('users.v1.fetch_api_key', {
    request: Type.Object({ realm_subdomain: Type.String(), username: Type.String(), password: Type.String() }),
    reply: Type.Object({ api_key: Type.String(), email: Type.String(), user_id: Type.Integer() }),
  }),
  list: rpc('users.v1.list', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, ...ViewOptions }),
    reply: Type.Object({ members: Type.Array(JsonObject) }),
  }),
  get: rpc('users.v1.get', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({
      actor: Actor,
      user_id: Type.Optional(Type.Integer()),
      email: Type.Optional(Type.String()),
      ...ViewOptions,
    }),
    reply: Type.Object({ user: JsonObject }),
  }),
  me: rpc('users.v1.me', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor }),
    reply: JsonObject,
  }),
  create: rpc('users.v1.create', {
    request: Type.Object({ actor: Actor, email: Type.String(), password: Type.String(), full_name: Type.String() }),
    reply: Type.Object({ user_id: Type.Integer() }),
  }),
  /** Users of the actor's realm by ids and/or emails, for other services resolving recipients. */
  resolve: rpc('users.v1.resolve', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), user_ids: Type.Array(Type.Integer()), emails: Type.Array(Type.String()) }),
    reply: Type.Object({ users: Type.Array(UserRecord), missing_ids: Type.Array(Type.Integer()), missing_emails: Type.Array(Type.String()) }),
  }),
  /** Every user and the realm, for a service rebuilding its read model. */
  realmSnapshot: rpc('users.v1.realm_snapshot', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer() }),
    reply: Type.Object({ realm: RealmRecord, users: Type.Array(UserRecord) }),
  }),
  /** The realm alone, as the owner has it now (where a read model's copy of its settings may lag). */
  realm: rpc('users.v1.realm', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer() }),
    reply: Type.Object({ realm: RealmRecord }),
  }),
  /** The parts of /register's initial state the users service owns. */
  registerState: rpc('users.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply, safe: true }),
  /** Deactivates a user (DELETE /users/{id}, or oneself with DELETE /users/me). */
  deactivate: rpc('users.v1.deactivate', { request: Type.Object({ actor: Actor, user_id: Type.Integer() }), reply: Type.Object({}) }),
  /** A new API key for the caller; the old one stops working at once. */
  regenerateApiKey: rpc('users.v1.regenerate_api_key', { request: Type.Object({ actor: Actor }), reply: Type.Object({ api_key: Type.String() }) }),
  /**
   * PATCH /settings (and the legacy /settings/display, /settings/notifications): the caller's
   * settings, full name and password. The reply holds what Zulip adds to the success body.
   */
  updateSettings: rpc('users.v1.update_settings', {
    request: Type.Object({
      actor: Actor,
      settings: Type.Partial(UserSettings),
      full_name: Type.Optional(Type.String()),
      old_password: Type.Optional(Type.String()),
      new_password: Type.Optional(Type.String()),
    }),
    reply: JsonObject,
  }),
  /** The settings of some users of a realm, for services acting on them (typing, presence, drafts). */
  userSettings: rpc('users.v1.user_settings', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), user_ids: Type.Array(Type.Integer()) }),
    reply: Type.Object({ users: Type.Array(Type.Object({ user_id: Type.Integer(), settings: UserSettings, drafts_cleared_at: DraftsClearedAt })) }),
  }),
  /** PATCH /realm (administrators; some settings owners only). The reply lists what changed, as Zulip's does. */
  updateRealm: rpc('users.v1.update_realm', {
    request: Type.Object({ actor: Actor, changes: RealmSettingsPatch }),
    reply: JsonObject,
  }),
  /** PATCH /users/{user_id} (administrators): name, role and custom profile values of a user. */
  updateUser: rpc('users.v1.update_user', {
    request: Type.Object({
      actor: Actor,
      user_id: Type.Integer(),
      full_name: Type.Optional(Type.String()),
      role: Type.Optional(Type.Integer()),
      profile_data: Type.Optional(Type.Array(ProfileDataEntry)),
    }),
    reply: Type.Object({}),
  }),
  /** POST /users/{user_id}/reactivate (administrators). */
  reactivate: rpc('users.v1.reactivate', { request: Type.Object({ actor: Actor, user_id: Type.Integer() }), reply: Type.Object({}) }),
  /** GET /realm/profile_fields: the realm's custom profile fields in display order. */
  listProfileFields: rpc('users.v1.list_profile_fields', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor }),
    reply: Type.Object({ custom_fields: Type.Array(JsonObject) }),
  }),
  createProfileField: rpc('users.v1.create_profile_field', {
    request: Type.Object({
      actor: Actor,
      name: Type.String(),
      hint: Type.String(),
      field_type: Type.Integer(),
      field_data: JsonObject,
      display_in_profile_summary: Type.Boolean(),
      required: Type.Boolean(),
      editable_by_user: Type.Boolean(),
    }),
    reply: Type.Object({ id: Type.Integer() }),
  }),
  /** Absent properties keep their value. */
  updateProfileField: rpc('users.v1.update_profile_field', {
    request: Type.Object({
      actor: Actor,
      id: Type.Integer(),
      name: Type.Optional(Type.String()),
      hint: Type.Optional(Type.String()),
      field_data: Type.Optional(JsonObject),
      display_in_profile_summary: Type.Optional(Type.Boolean()),
      required: Type.Optional(Type.Boolean()),
      editable_by_user: Type.Optional(Type.Boolean()),
    }),
    reply: Type.Object({}),
  }),
  removeProfileField: rpc('users.v1.remove_profile_field', { request: Type.Object({ actor: Actor, id: Type.Integer() }), reply: Type.Object({}) }),
  reorderProfileFields: rpc('users.v1.reorder_profile_fields', {
    request: Type.Object({ actor: Actor, order: Type.Array(Type.Integer()) }),
    reply: Type.Object({}),
  }),
  /** PATCH /users/me/profile_data: the caller's own values. */
  updateOwnProfileData: rpc('users.v1.update_own_profile_data', {
    request: Type.Object({ actor: Actor, data: Type.Array(ProfileDataEntry) }),
    reply: Type.Object({}),
  }),
  /** DELETE /users/me/profile_data: removes the caller's values of these fields. */
  removeOwnProfileData: rpc('users.v1.remove_own_profile_data', {
    request: Type.Object({ actor: Actor, data: Type.Array(Type.Integer()) }),
    reply: Type.Object({}),
  }),
  /** GET /bot_storage: the caller's entries, all or those named by `keys`. */
  getBotStorage: rpc('users.v1.get_bot_storage', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, keys: Type.Optional(Type.Array(Type.String())) }),
    reply: Type.Object({ storage: Type.Record(Type.String(), Type.String()) }),
  }),
  updateBotStorage: rpc('users.v1.update_bot_storage', {
    request: Type.Object({ actor: Actor, storage: Type.Record(Type.String(), Type.String()) }),
    reply: Type.Object({}),
  }),
  removeBotStorage: rpc('users.v1.remove_bot_storage', {
    request: Type.Object({ actor: Actor, keys: Type.Optional(Type.Array(Type.String())) }),
    reply: Type.Object({}),
  }),
  /** POST /users/me/status; only the given fields change. */
  updateStatus: rpc('users.v1.update_status', {
    request: Type.Object({
      actor: Actor,
      away: Type.Optional(Type.Boolean()),
      status_text: Type.Optional(Type.String()),
      emoji_name: Type.Optional(Type.String()),
      emoji_code: Type.Optional(Type.String()),
      reaction_type: Type.Optional(Type.String()),
    }),
    reply: Type.Object({}),
  }),
  listLinkifiers: rpc('users.v1.list_linkifiers', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer() }),
    /** `filters` is the same list in the legacy `[pattern, url_format, id]` shape. */
    reply: Type.Object({ linkifiers: Type.Array(Linkifier), filters: Type.Array(Type.Tuple([Type.String(), Type.String(), Type.Integer()])) }),
  }),
  addLinkifier: rpc('users.v1.add_linkifier', { request: Type.Object(LinkifierInput), reply: Type.Object({ id: Type.Integer() }) }),
  updateLinkifier: rpc('users.v1.update_linkifier', {
    request: Type.Object({ ...LinkifierInput, id: Type.Integer() }),
    reply: Type.Object({}),
  }),
  removeLinkifier: rpc('users.v1.remove_linkifier', { request: Type.Object({ actor: Actor, id: Type.Integer() }), reply: Type.Object({}) }),
  reorderLinkifiers: rpc('users.v1.reorder_linkifiers', {
    request: Type.Object({ actor: Actor, ordered_linkifier_ids: Type.Array(Type.Integer()) }),
    reply: Type.Object({}),
  }),
  addPlayground: rpc('users.v1.add_playground', {
    request: Type.Object({ actor: Actor, name: Type.String(), pygments_language: Type.String(), url_prefix: Type.String() }),
    reply: Type.Object({ id: Type.Integer() }),
  }),
  removePlayground: rpc('users.v1.remove_playground', { request: Type.Object({ actor: Actor, id: Type.Integer() }), reply: Type.Object({}) }),
  updateUserSettingsDefaults: rpc('users.v1.update_user_settings_defaults', {
    request: Type.Object({ actor: Actor, settings: Type.Partial(UserSettings) }),
    reply: Type.Object({}),
  }),
  muteUser: rpc('users.v1.mute_user', { request: Type.Object({ actor: Actor, muted_user_id: Type.Integer() }), reply: Type.Object({}) }),
  unmuteUser: rpc('users.v1.unmute_user', { request: Type.Object({ actor: Actor, muted_user_id: Type.Integer() }), reply: Type.Object({}) }),
  listAlertWords: rpc('users.v1.list_alert_words', { safe: true, request: Type.Object({ actor: Actor }), reply: Type.Object({ alert_words: Type.Array(Type.String()) }) }),
  addAlertWords: rpc('users.v1.add_alert_words', {
    request: Type.Object({ actor: Actor, alert_words: Type.Array(Type.String()) }),
    reply: Type.Object({ alert_words: Type.Array(Type.String()) }),
  }),
  removeAlertWords: rpc('users.v1.remove_alert_words', {
    request: Type.Object({ actor: Actor, alert_words: Type.Array(Type.String()) }),
    reply: Type.Object({ alert_words: Type.Array(Type.String()) }),
  }),
  /**
   * POST /users/me/presence: records the caller's status (unless presence is hidden), then,
   * unless `ping_only`, answers with the realm's presence like `realmPresence`.
   */
  updatePresence: rpc('users.v1.update_presence', {
    request: Type.Object({ actor: Actor, status: Type.Union([Type.Literal('active'), Type.Literal('idle')]), ping_only: Type.Boolean(), ...PresenceFetch }),
    reply: JsonObject,
  }),
  /**
   * The realm's presence: `presences` (modern format by user id when `slim_presence` or
   * `last_update_id` is given, else the legacy one by email), `server_timestamp`,
   * `presence_last_update_id`. GET /realm/presence and /register's `presence` type.
   */
  realmPresence: rpc('users.v1.realm_presence', { safe: true, request: Type.Object({ actor: Actor, ...PresenceFetch }), reply: JsonObject }),
  /**
   * The display emails of users of the actor's realm for the legacy presence answer, which the
   * gateway builds from its copy of the realm's presence (shared presence/legacy.ts): keyed by
   * user id, null for users presence does not list (inactive, bots, unknown ids).
   */
  presenceEmails: rpc('users.v1.presence_emails', {
    safe: true,
    request: Type.Object({ actor: Actor, user_ids: Type.Array(Type.Integer(), { maxItems: 100_000 }) }),
    reply: Type.Object({ emails: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()])) }),
  }),
  /** GET /users/{user_id_or_email}/presence: one user's presence in the legacy format. */
  userPresence: rpc('users.v1.user_presence', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, user_id: Type.Optional(Type.Integer()), email: Type.Optional(Type.String()) }),
    reply: Type.Object({ presence: JsonObject }),
  }),
} as const;

export const usersEvents = {
  realmCreated: event('users.evt.v1.realm.created', RealmRecord),
  realmUpdated: event('users.evt.v1.realm.updated', RealmRecord),
  userCreated: event('users.evt.v1.user.created', UserRecord),
  /** Any change of a user's record, including deactivation and role changes. */
  userUpdated: event('users.evt.v1.user.updated', UserRecord),
  /** The user's API key changed: cached credentials must be dropped. */
  apiKeyChanged: event('users.evt.v1.api_key.changed', Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer() })),
  /** A user's settings after a change; `changed` names the settings that changed. */
  userSettingsChanged: event(
    'users.evt.v1.user_settings.changed',
    Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer(), settings: UserSettings, changed: Type.Array(Type.String()), drafts_cleared_at: DraftsClearedAt }),
  ),
  /** The realm's whole ordered linkifier list after any change (renderers keep it as a read model). */
  linkifiersChanged: event('users.evt.v1.linkifiers.changed', Type.Object({ realm_id: Type.Integer(), linkifiers: Type.Array(Linkifier) })),
  /** A user's whole alert word list after a change (for the has_alert_word flag). */
  alertWordsChanged: event(
    'users.evt.v1.alert_words.changed',
    Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer(), alert_words: Type.Array(Type.String()) }),
  ),
  /** `user_id` muted (or unmuted) `muted_user_id`; `revision` orders the changes of one pair. */
  mutedUserChanged: event('users.evt.v1.muted_user.changed', MutedUserChange),
} as const;

export const usersInbox = {
  /**
   * Durable, from the subscriptions service's outbox: the "general" stream it made for a new
   * realm, which becomes the realm's notifications stream unless one is set already.
   */
  realmNotificationsStream: event('users.inbox.v1.realm_notifications_stream', Type.Object({ realm_id: Type.Integer(), stream_id: Type.Integer() })),
  /**
   * Durable, from the subscriptions service's outbox: a stream was archived, so realm settings
   * naming it (the notifications streams) name none any more, as Zulip shows a deactivated one.
   */
  streamArchived: event('users.inbox.v1.stream_archived', Type.Object({ realm_id: Type.Integer(), stream_id: Type.Integer() })),
} as const;

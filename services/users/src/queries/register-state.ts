/** The parts of POST /register's initial state that the users service owns (api-notes §2.1). */
import { LIMITS, PRESENCE_TIMING, Role, THUMBNAIL_FORMATS, TYPING_TIMING, type Actor } from '@zc/shared/contracts';
import { realmHostOf, realmUrlOf, type UsersDeps } from '../deps.js';
import { GIPHY_RATING_OPTIONS, VIDEO_CHAT_PROVIDERS } from '../lib/realm-settings.js';
import { legacySettingsState, settingsOf, userSettingsState } from '../lib/user-settings.js';
import { realmSettings } from '@zc/shared/policy';
import { avatarUrl, toApiBot, toApiUser } from '../lib/user-view.js';
import { userStore } from '../store/user-store.js';
import { badRequest } from '@zc/shared/errors';
import { readWithSnapshot, type Queryable } from '@zc/shared/db';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { listUserGroups } from './user-groups.js';
import { getRealmPresence } from './presence.js';
import { alertWordStore, linkifierStore } from '../store/linkifier-store.js';
import { templateToLegacyFormat } from '../lib/linkifier-rules.js';
import { CUSTOM_PROFILE_FIELD_TYPES, toApiField } from '../lib/profile-field-rules.js';
import { profileFieldStore } from '../store/profile-field-store.js';
import { formatUserStatus } from '../lib/user-status.js';
import { realmUserSettingsDefaults } from '../actions/user-settings-defaults.js';
import { toApiMutedUsers } from '../actions/muted-users.js';
import { playgroundStore } from '../store/playground-store.js';
import { mutedUserStore } from '../store/muted-user-store.js';
import { userStatusStore } from '../store/user-status-store.js';

/** Reads the users service's part of /register in one snapshot (see RegisterStateReply). */
export async function getRegisterState(
  deps: UsersDeps,
  actor: Actor,
  fetch: readonly string[],
  options: { client_gravatar?: unknown; client_capabilities?: unknown; slim_presence?: unknown },
): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const capabilities = (options.client_capabilities ?? {}) as Record<string, unknown>;
  const view = { clientGravatar: options.client_gravatar !== false, userSettingsObject: capabilities.user_settings_object === true };
  const { snapshot, result } = await readWithSnapshot(deps.pool, (q) => readState(deps, q, actor, fetch, view));
  // Presence is in Redis, outside the snapshot: its events set a user's whole presence, so one
  // that the state already holds does no harm when applied again.
  if (fetch.includes('presence')) Object.assign(result, await getRealmPresence(deps, actor, { slim_presence: options.slim_presence === true }));
  return { snapshot, state: result };
}

async function readState(
  deps: UsersDeps,
  q: Queryable,
  actor: Actor,
  fetch: readonly string[],
  view: { clientGravatar: boolean; userSettingsObject: boolean },
): Promise<Record<string, unknown>> {
  const { clientGravatar } = view;
  const want = (t: string) => fetch.includes(t);
  const realm = await realmStore.findById(q, actor.realm_id);
  if (!realm) throw badRequest('Invalid realm');
  const url = realmUrlOf(deps, realm);
  const out: Record<string, unknown> = {};
  const me = await userStore.findById(q, realm.id, actor.user_id);
  const userSettings = settingsOf(me?.settings, me?.timezone ?? '');

  if (want('realm')) Object.assign(out, realmState(deps, realm, url));
  if (want('realm_user_settings_defaults')) out.realm_user_settings_defaults = await realmUserSettingsDefaults(q, realm.id);
  // realm_users and the system groups' members read the same listing (one read of the realm's people).
  const all = want('realm_user') || want('realm_user_groups') ? await userStore.listByRealm(q, realm.id) : [];
  if (want('realm_user')) {
    const realmHost = realmHostOf(deps, realm);
    const profileValues = await userStore.realmProfileValues(q, realm.id);
    const view = (u: (typeof all)[number]) =>
      toApiUser(u, realm, { viewerRole: actor.role, clientGravatar, includeCustomProfileFields: true, realmHost, profileValues });
    out.realm_users = all.filter((u) => u.is_active).map(view);
    out.realm_non_active_users = all.filter((u) => !u.is_active).map(view);
    out.cross_realm_bots = (await userStore.listSystemBots(q, realm.id)).map((u) => ({ ...view(u), is_system_bot: true }));
    if (me) {
      Object.assign(out, {
        user_id: me.id,
        email: actor.email,
        delivery_email: me.delivery_email,
        full_name: me.full_name,
        avatar_source: me.avatar_source,
        avatar_url: avatarUrl(me, false, realm),
        avatar_url_medium: avatarUrl(me, false, realm),
        is_admin: me.role <= Role.ADMINISTRATOR,
        is_owner: me.role === Role.OWNER,
        is_moderator: me.role === Role.MODERATOR,
        is_guest: me.role === Role.GUEST,
        is_billing_admin: false,
        can_create_streams: me.role !== Role.GUEST,
        can_create_public_streams: me.role !== Role.GUEST,
        can_create_private_streams: me.role !== Role.GUEST,
        can_create_web_public_streams: false,
        can_subscribe_other_users: me.role !== Role.GUEST,
        can_invite_others_to_realm: me.role !== Role.GUEST,
      });
    }
  }
  if (want('custom_profile_fields')) {
    out.custom_profile_fields = (await profileFieldStore.listForRealm(q, realm.id)).map(toApiField);
    out.custom_profile_field_types = CUSTOM_PROFILE_FIELD_TYPES;
  }
  if (want('realm_bot')) {
    // Zulip's get_owned_bot_dicts: administrators see every bot of the realm, others their own.
    const bots = await userStore.listBots(q, realm.id, (me?.role ?? actor.role) <= Role.ADMINISTRATOR ? null : actor.user_id);
    out.realm_bots = bots.map((b) => toApiBot(b, realm, realmHostOf(deps, realm), deps.vault.decrypt(b.api_key_enc)));
  }
  if (want('user_status')) {
    const statuses = (await userStatusStore.listForRealm(q, realm.id)).map((row) => [String(row.user_id), formatUserStatus(row)] as const);
    out.user_status = Object.fromEntries(statuses.filter(([, v]) => Object.keys(v).length > 0));
  }
  if (want('user_settings')) out.user_settings = userSettingsState(userSettings);
  if (want('realm_linkifiers') || want('realm_filters')) {
    const linkifiers = await linkifierStore.listForRealm(q, realm.id);
    if (want('realm_linkifiers')) out.realm_linkifiers = linkifiers.map((l) => ({ pattern: l.pattern, url_template: l.url_template, id: l.id }));
    if (want('realm_filters')) out.realm_filters = linkifiers.map((l) => [l.pattern, templateToLegacyFormat(l.url_template), l.id]);
  }
  if (want('realm_playgrounds')) out.realm_playgrounds = await playgroundStore.listForRealm(q, realm.id);
  if (want('muted_users')) out.muted_users = toApiMutedUsers(await mutedUserStore.listForUser(q, actor.user_id));
  if (want('alert_words')) out.alert_words = await alertWordStore.listForUser(q, actor.user_id);
  if (want('realm_user_groups')) out.realm_user_groups = await listUserGroups(q, actor.realm_id, { users: all, waitingPeriodDays: realmSettings(realm.settings).waiting_period_threshold, now: realm.full_members_swept_at });
  // Clients from before FL 89 read the settings at the top level (Zulip sends them only to those).
  if (!view.userSettingsObject) {
    Object.assign(out, legacySettingsState(userSettings, { display: want('update_display_settings'), notifications: want('update_global_notifications') }));
  }
  return out;
}

/**
 * The `realm` fetch type: every realm setting as `realm_<name>`, and the server's limits and
 * facts (Zulip's fetch_initial_state_data at FL 155, plus the presence and typing timings of
 * later levels, which older clients ignore).
 */
function realmState(deps: UsersDeps, realm: RealmRow, url: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const settings = realmSettings(realm.settings);
  for (const [k, v] of Object.entries(settings)) out[`realm_${k}`] = v;
  const host = new URL(url).hostname;
  return Object.assign(out, {
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: url,
    realm_uri: url,
    realm_icon_url: `${url}/static/images/logo/zulip-icon-128x128.png`,
    realm_logo_url: `${url}/static/images/logo/zulip-org-logo.svg`,
    realm_night_logo_url: `${url}/static/images/logo/zulip-org-logo.svg`,
    realm_email_address_visibility: realm.email_address_visibility,
    realm_date_created: Math.floor(realm.date_created.getTime() / 1000),
    realm_bot_domain: host,
    realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
    realm_is_zephyr_mirror_realm: false,
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_push_notifications_enabled: false,
    realm_upload_quota_mib: deps.config.realmUploadQuotaMib,
    settings_send_digest_emails: true,
    giphy_rating_options: GIPHY_RATING_OPTIONS,
    jitsi_server_url: 'https://meet.jit.si',
    development_environment: false,
    password_min_length: 6,
    password_min_guesses: 10000,
    max_avatar_file_size_mib: 5,
    max_icon_file_size_mib: 5,
    max_logo_file_size_mib: 5,
    max_message_length: LIMITS.maxMessageLength,
    max_topic_length: LIMITS.maxTopicLength,
    max_stream_name_length: LIMITS.maxStreamNameLength,
    max_stream_description_length: LIMITS.maxStreamDescriptionLength,
    max_file_upload_size_mib: deps.config.maxFileUploadSizeMib,
    server_emoji_data_url: `${url}/static/generated/emoji/emoji_api.json`,
    server_generation: deps.serverGeneration,
    server_presence_ping_interval_seconds: PRESENCE_TIMING.pingIntervalSeconds,
    server_presence_offline_threshold_seconds: PRESENCE_TIMING.offlineThresholdSeconds,
    server_typing_started_expiry_period_milliseconds: TYPING_TIMING.startedExpiryMs,
    server_typing_stopped_wait_period_milliseconds: TYPING_TIMING.stoppedWaitMs,
    server_typing_started_wait_period_milliseconds: TYPING_TIMING.startedWaitMs,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: THUMBNAIL_FORMATS.map((f) => ({ ...f })),
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_web_public_streams_enabled: false,
    server_needs_upgrade: false,
    event_queue_longpoll_timeout_seconds: 90,
    upgrade_text_for_wide_organization_logo: '',
    zulip_plan_is_not_limited: true,
  });
}

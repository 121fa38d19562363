/**
 * Personal settings as Zulip has them at our feature level (155): defaults, the choices a
 * value must come from, Zulip's error messages, and which legacy group (pre-FL-89 clients'
 * `update_display_settings` / `update_global_notifications`) a setting belongs to. Pure.
 */
import type { UserSettingName, UserSettings } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';

/** Zulip's UserProfile defaults (UserBaseSettings), with `timezone` unset. */
export const DEFAULT_USER_SETTINGS: UserSettings = {
  twenty_four_hour_time: false,
  dense_mode: true,
  starred_message_counts: true,
  fluid_layout_width: false,
  high_contrast_mode: false,
  color_scheme: 1,
  translate_emoticons: false,
  display_emoji_reaction_users: true,
  default_language: 'en',
  default_view: 'recent_topics',
  escape_navigates_to_default_view: true,
  left_side_userlist: false,
  emojiset: 'google',
  demote_inactive_streams: 1,
  user_list_style: 2,
  timezone: '',
  enter_sends: false,
  enable_drafts_synchronization: true,
  enable_stream_desktop_notifications: false,
  enable_stream_email_notifications: false,
  enable_stream_push_notifications: false,
  enable_stream_audible_notifications: false,
  notification_sound: 'zulip',
  enable_desktop_notifications: true,
  enable_sounds: true,
  email_notifications_batching_period_seconds: 120,
  enable_offline_email_notifications: true,
  enable_offline_push_notifications: true,
  enable_online_push_notifications: true,
  enable_digest_emails: true,
  enable_marketing_emails: true,
  enable_login_emails: true,
  message_content_in_email_notifications: true,
  pm_content_in_desktop_notifications: true,
  wildcard_mentions_notify: true,
  desktop_icon_count_display: 1,
  realm_name_in_notifications: false,
  presence_enabled: true,
  send_private_typing_notifications: true,
  send_stream_typing_notifications: true,
  send_read_receipts: true,
};

export const USER_SETTING_NAMES = Object.keys(DEFAULT_USER_SETTINGS) as UserSettingName[];

/** Zulip's UserProfile.display_settings_legacy: the top-level keys of pre-FL-89 clients' update_display_settings. */
export const DISPLAY_SETTINGS_LEGACY: readonly UserSettingName[] = [
  'color_scheme',
  'default_language',
  'default_view',
  'demote_inactive_streams',
  'dense_mode',
  'emojiset',
  'enable_drafts_synchronization',
  'enter_sends',
  'fluid_layout_width',
  'high_contrast_mode',
  'left_side_userlist',
  'starred_message_counts',
  'translate_emoticons',
  'twenty_four_hour_time',
];

/** Zulip's UserProfile.notification_settings_legacy. */
export const NOTIFICATION_SETTINGS_LEGACY: readonly UserSettingName[] = [
  'enable_desktop_notifications',
  'enable_digest_emails',
  'enable_login_emails',
  'enable_marketing_emails',
  'email_notifications_batching_period_seconds',
  'enable_offline_email_notifications',
  'enable_offline_push_notifications',
  'enable_online_push_notifications',
  'enable_sounds',
  'enable_stream_desktop_notifications',
  'enable_stream_email_notifications',
  'enable_stream_push_notifications',
  'enable_stream_audible_notifications',
  'wildcard_mentions_notify',
  'message_content_in_email_notifications',
  'notification_sound',
  'pm_content_in_desktop_notifications',
  'desktop_icon_count_display',
  'realm_name_in_notifications',
  'presence_enabled',
];

/** The sound files the server offers (Zulip lists static/audio/notification_sounds); `none` is also accepted. */
export const AVAILABLE_NOTIFICATION_SOUNDS = ['chime-dl', 'ding', 'zulip'] as const;

export const EMOJISET_CHOICES = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
] as const;

/** Languages the server knows, with the English names events carry as `language_name`. */
export const LANGUAGES: Readonly<Record<string, string>> = {
  ar: 'Arabic',
  be: 'Belarusian',
  bg: 'Bulgarian',
  bn: 'Bengali',
  ca: 'Catalan',
  cs: 'Czech',
  cy: 'Welsh',
  da: 'Danish',
  de: 'German',
  el: 'Greek',
  en: 'English',
  en_GB: 'British English',
  eo: 'Esperanto',
  es: 'Spanish',
  fa: 'Persian',
  fi: 'Finnish',
  fr: 'French',
  gl: 'Galician',
  gu: 'Gujarati',
  hi: 'Hindi',
  hu: 'Hungarian',
  id: 'Indonesian',
  it: 'Italian',
  ja: 'Japanese',
  ko: 'Korean',
  lt: 'Lithuanian',
  lv: 'Latvian',
  ml: 'Malayalam',
  mn: 'Mongolian',
  nl: 'Dutch',
  no: 'Norwegian',
  pl: 'Polish',
  pt: 'Portuguese',
  pt_BR: 'Portuguese (Brazil)',
  pt_PT: 'Portuguese (Portugal)',
  ro: 'Romanian',
  ru: 'Russian',
  si: 'Sinhala',
  sr: 'Serbian',
  sv: 'Swedish',
  ta: 'Tamil',
  tl: 'Tagalog',
  tr: 'Turkish',
  uk: 'Ukrainian',
  uz: 'Uzbek',
  vi: 'Vietnamese',
  'zh-hans': 'Simplified Chinese',
  'zh-hant': 'Traditional Chinese',
};

/** Integer settings and the values Zulip allows (check_int_in). */
const INT_CHOICES: Partial<Record<UserSettingName, readonly number[]>> = {
  color_scheme: [1, 2, 3],
  demote_inactive_streams: [1, 2, 3],
  user_list_style: [1, 2, 3],
  desktop_icon_count_display: [1, 2, 3],
};

const MAX_BATCHING_PERIOD_SECONDS = 7 * 24 * 60 * 60;

export function isValidTimezone(tz: string): boolean {
  if (tz === '') return true;
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Checks one decoded setting value against Zulip's rules; throws Zulip's error. */
export function checkSettingValue(name: UserSettingName, value: unknown): void {
  const choices = INT_CHOICES[name];
  if (choices && !choices.includes(value as number)) throw badRequest(`Invalid ${name}`);
  switch (name) {
    case 'default_language':
      if (!Object.hasOwn(LANGUAGES, value as string)) throw badRequest('Invalid default_language');
      return;
    case 'default_view':
      if (value !== 'recent_topics' && value !== 'all_messages') throw badRequest('Invalid default_view');
      return;
    case 'emojiset':
      if (!EMOJISET_CHOICES.some((c) => c.key === value)) throw badRequest('Invalid emojiset');
      return;
    case 'notification_sound':
      if (value !== 'none' && !(AVAILABLE_NOTIFICATION_SOUNDS as readonly string[]).includes(value as string)) {
        throw badRequest(`Invalid notification sound '${String(value)}'`);
      }
      return;
    case 'email_notifications_batching_period_seconds': {
      const v = value as number;
      if (v <= 0 || v > MAX_BATCHING_PERIOD_SECONDS) throw badRequest(`Invalid email batching period: ${v} seconds`);
      return;
    }
    case 'timezone':
      if (!isValidTimezone(value as string)) throw badRequest(`Invalid timezone '${String(value)}'`);
      return;
    default:
      return;
  }
}

/** A user's settings: the stored ones over the defaults, with the user's timezone. */
export function settingsOf(stored: Record<string, unknown> | undefined, timezone: string): UserSettings {
  const out = { ...DEFAULT_USER_SETTINGS } as Record<string, unknown>;
  for (const k of USER_SETTING_NAMES) if (stored && Object.hasOwn(stored, k)) out[k] = stored[k];
  out.timezone = timezone;
  return out as UserSettings;
}

/** /register's user_settings: the settings plus the server's choice lists. */
export function userSettingsState(settings: UserSettings): Record<string, unknown> {
  return { ...settings, available_notification_sounds: [...AVAILABLE_NOTIFICATION_SOUNDS], emojiset_choices: EMOJISET_CHOICES.map((c) => ({ ...c })) };
}

/** The legacy top-level keys for clients without the user_settings_object capability. */
export function legacySettingsState(settings: UserSettings, groups: { display: boolean; notifications: boolean }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (groups.display) {
    for (const k of DISPLAY_SETTINGS_LEGACY) out[k] = settings[k];
    out.timezone = settings.timezone;
    out.emojiset_choices = EMOJISET_CHOICES.map((c) => ({ ...c }));
  }
  if (groups.notifications) {
    for (const k of NOTIFICATION_SETTINGS_LEGACY) out[k] = settings[k];
    out.available_notification_sounds = [...AVAILABLE_NOTIFICATION_SOUNDS];
  }
  return out;
}

/**
 * The client events of one setting change (Zulip's do_change_user_setting): `user_settings`
 * update for everyone, plus the legacy form for settings that had one (the events service
 * gives those only to queues without user_settings_object).
 */
export function settingChangeEvents(name: UserSettingName, value: unknown, email: string): Record<string, unknown>[] {
  const languageName = name === 'default_language' ? { language_name: LANGUAGES[value as string] ?? String(value) } : {};
  const events: Record<string, unknown>[] = [{ type: 'user_settings', op: 'update', property: name, value, ...languageName }];
  if (NOTIFICATION_SETTINGS_LEGACY.includes(name)) {
    events.push({ type: 'update_global_notifications', user: email, notification_name: name, setting: value });
  }
  if (DISPLAY_SETTINGS_LEGACY.includes(name) || name === 'timezone') {
    events.push({ type: 'update_display_settings', user: email, setting_name: name, setting: value, ...languageName });
  }
  return events;
}

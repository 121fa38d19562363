/**
 * PATCH /realm's rules at our feature level (155): the values each organisation setting
 * accepts, with Zulip's messages, which settings only owners may change, and the client event
 * each change sends. The defaults are @zc/shared/policy's, shared by every service. Pure.
 */
import type { RealmSettingsPatch } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { REALM_SETTING_DEFAULTS } from '@zc/shared/policy';
import { LANGUAGES } from './user-settings.js';

/** The authentication backends this server has; only email + password is built. */
export const AUTHENTICATION_BACKENDS = ['Email'] as const;

export const VIDEO_CHAT_PROVIDERS = { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } } as const;

export const GIPHY_RATING_OPTIONS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  'pg-13': { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
} as const;

export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

// Zulip's policy value sets (Realm.COMMON_POLICY_TYPES and friends).
const COMMON_POLICY = [1, 2, 3, 4];
const COMMON_MESSAGE_POLICY = [1, 2, 3, 4, 5];
const INT_CHOICES: Record<string, readonly number[]> = {
  invite_to_realm_policy: [1, 2, 3, 4, 6],
  add_custom_emoji_policy: COMMON_POLICY,
  delete_own_message_policy: COMMON_MESSAGE_POLICY,
  edit_topic_policy: COMMON_MESSAGE_POLICY,
  bot_creation_policy: [1, 2, 3],
  create_public_stream_policy: COMMON_POLICY,
  create_private_stream_policy: COMMON_POLICY,
  create_web_public_stream_policy: [2, 4, 6, 7],
  invite_to_stream_policy: COMMON_POLICY,
  move_messages_between_streams_policy: COMMON_POLICY,
  user_group_edit_policy: COMMON_POLICY,
  private_message_policy: [1, 2],
  wildcard_mention_policy: [1, 2, 3, 5, 6, 7],
  digest_weekday: [0, 1, 2, 3, 4, 5, 6],
  org_type: [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100, 1000],
};

/** Settings only organisation owners may change (Zulip's update_realm). */
export const OWNER_ONLY_SETTINGS: ReadonlySet<string> = new Set([
  'invite_required',
  'invite_to_realm_policy',
  'emails_restricted_to_domains',
  'disallow_disposable_email_addresses',
  'waiting_period_threshold',
  'authentication_methods',
  'message_retention_days',
]);

/** Settings whose change Zulip announces as `update_dict` (coupled message-editing settings). */
const UPDATE_DICT_SETTINGS: ReadonlySet<string> = new Set([
  'allow_message_editing',
  'edit_topic_policy',
  'message_content_edit_limit_seconds',
  'authentication_methods',
]);

const badValue = (name: string, value: unknown) => badRequest(`Bad value for '${name}': ${typeof value === 'string' ? value : JSON.stringify(value)}`);

/** A time limit: a positive number of seconds, or `unlimited` (null). */
function timeLimit(name: string, raw: number | string): number | null {
  if (raw === 'unlimited') return null;
  if (typeof raw !== 'number' || raw <= 0) throw badValue(name, raw);
  return raw;
}

/** Message retention: a positive number of days, or `unlimited`/`forever` (-1). */
function retentionDays(raw: number | string): number {
  if (raw === 'unlimited' || raw === 'forever') return -1;
  if (typeof raw !== 'number' || raw <= 0) throw badValue('message_retention_days', raw);
  return raw;
}

function authenticationMethods(raw: Record<string, unknown>): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!(AUTHENTICATION_BACKENDS as readonly string[]).includes(k)) throw badRequest(`Invalid authentication method: ${k}`);
    if (typeof v !== 'boolean') throw badValue('authentication_methods', raw);
    out[k] = v;
  }
  const merged = { ...REALM_SETTING_DEFAULTS.authentication_methods, ...out };
  if (!Object.values(merged).includes(true)) throw badRequest('At least one authentication method must be enabled.');
  return merged;
}

/**
 * Checks and normalises a PATCH /realm request (syntax already decoded): the stored value of
 * each setting named. Stream ids are checked by the caller (they need the subscriptions service).
 */
export function normaliseRealmPatch(patch: RealmSettingsPatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const choices = INT_CHOICES[name];
    if (choices && !choices.includes(value as number)) throw badRequest(`Invalid ${name}`);
    switch (name) {
      case 'name':
        if ((value as string).length > MAX_REALM_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_REALM_NAME_LENGTH} characters)`);
        break;
      case 'description':
        if ((value as string).length > MAX_REALM_DESCRIPTION_LENGTH) {
          throw badRequest(`description is too long (limit: ${MAX_REALM_DESCRIPTION_LENGTH} characters)`);
        }
        break;
      case 'default_language':
        if (!Object.hasOwn(LANGUAGES, value as string)) throw badRequest(`Invalid language '${String(value)}'`);
        break;
      case 'waiting_period_threshold':
        if ((value as number) < 0) throw badValue(name, value);
        break;
      case 'video_chat_provider':
        if (!Object.values(VIDEO_CHAT_PROVIDERS).some((p) => p.id === value)) throw badRequest(`Invalid video_chat_provider ${String(value)}`);
        break;
      case 'giphy_rating':
        if (!Object.values(GIPHY_RATING_OPTIONS).some((p) => p.id === value)) throw badRequest(`Invalid giphy_rating ${String(value)}`);
        break;
      case 'message_content_edit_limit_seconds':
      case 'message_content_delete_limit_seconds':
        out[name] = timeLimit(name, value as number | string);
        continue;
      case 'message_retention_days':
        out[name] = retentionDays(value as number | string);
        continue;
      case 'authentication_methods':
        out[name] = authenticationMethods(value as Record<string, unknown>);
        continue;
      case 'notifications_stream_id':
      case 'signup_notifications_stream_id':
        if ((value as number) < -1) throw badRequest('Invalid stream ID');
        break;
      default:
        break;
    }
    out[name] = value;
  }
  return out;
}

/** The client event announcing one realm setting's new value (Zulip's do_set_realm_property, FL 150+). */
export function realmChangeEvent(name: string, value: unknown): Record<string, unknown> {
  if (UPDATE_DICT_SETTINGS.has(name)) return { type: 'realm', op: 'update_dict', property: 'default', data: { [name]: value } };
  return { type: 'realm', op: 'update', property: name, value };
}

/** PATCH /realm's reply entry for a changed setting: strings are reported as "updated", as Zulip does. */
export function changeReplyValue(value: unknown): unknown {
  return typeof value === 'string' ? 'updated' : value;
}

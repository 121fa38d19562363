/**
 * How a user looks to a given viewer (spec 2.6): display email under the realm's email
 * visibility, avatar URL with the client_gravatar rule, role flags.
 */
import { createHash } from 'node:crypto';
import { Role, type UserRecord } from '@zc/shared/contracts';
import type { RealmRow } from '../store/realm-store.js';
import type { PersonRow, ProfileValues } from '../store/user-store.js';

export const EMAIL_VISIBILITY_EVERYONE = 1;

/** The address everyone sees: the real one, or `user<id>@<realm host>` when visibility is limited. */
export function displayEmail(user: Pick<PersonRow, 'id' | 'delivery_email'>, realm: RealmRow, realmHost: string): string {
  return realm.email_address_visibility === EMAIL_VISIBILITY_EVERYONE ? user.delivery_email : `user${user.id}@${realmHost}`;
}

/**
 * Gravatar URL of the email's hash. With client_gravatar the client computes it itself, so
 * the server sends null; Zulip honours client_gravatar only when everyone may see emails
 * (otherwise the client could not hash the real address).
 */
export function avatarUrl(user: Pick<PersonRow, 'delivery_email' | 'avatar_source' | 'avatar_version'>, clientGravatar: boolean, realm: RealmRow): string | null {
  if (user.avatar_source === 'G') {
    if (clientGravatar && realm.email_address_visibility === EMAIL_VISIBILITY_EVERYONE) return null;
    const hash = createHash('md5').update(user.delivery_email.toLowerCase()).digest('hex');
    return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${user.avatar_version}`;
  }
  return `/user_avatars/${user.delivery_email}?version=${user.avatar_version}`;
}

export interface ViewOptions {
  viewerRole: number;
  clientGravatar: boolean;
  includeCustomProfileFields: boolean;
  realmHost: string;
  profileValues?: ProfileValues;
}

export function toApiUser(u: PersonRow, realm: RealmRow, o: ViewOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {
    user_id: u.id,
    email: displayEmail(u, realm, o.realmHost),
    full_name: u.full_name,
    date_joined: u.date_joined.toISOString(),
    is_active: u.is_active,
    is_owner: u.role === Role.OWNER,
    is_admin: u.role <= Role.ADMINISTRATOR,
    is_guest: u.role === Role.GUEST,
    is_billing_admin: false,
    is_bot: u.is_bot,
    bot_type: u.bot_type,
    role: u.role,
    timezone: u.timezone,
    avatar_url: avatarUrl(u, o.clientGravatar, realm),
    avatar_version: u.avatar_version,
  };
  // Spec 2.6: the real address is shown only when it differs from `email` and the viewer may see it.
  if (realm.email_address_visibility !== EMAIL_VISIBILITY_EVERYONE && o.viewerRole <= Role.ADMINISTRATOR) {
    out.delivery_email = u.delivery_email;
  }
  if (u.is_bot) {
    out.bot_owner_id = u.bot_owner_id;
  } else if (o.includeCustomProfileFields) {
    const data: Record<string, { value: string; rendered_value?: string }> = {};
    for (const v of o.profileValues?.get(u.id) ?? []) {
      data[String(v.field_id)] = v.rendered_value === null ? { value: v.value } : { value: v.value, rendered_value: v.rendered_value };
    }
    out.profile_data = data;
  }
  return out;
}

export function toUserRecord(u: PersonRow, realm: RealmRow, realmHost: string): UserRecord {
  return {
    user_id: u.id,
    realm_id: u.realm_id,
    email: displayEmail(u, realm, realmHost),
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_active: u.is_active,
    is_bot: u.is_bot,
    is_system_bot: u.is_system_bot,
    bot_type: u.bot_type,
    bot_owner_id: u.bot_owner_id,
    timezone: u.timezone,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    date_joined: u.date_joined.toISOString(),
  };
}

/**
 * A bot as `realm_bots` and realm_bot events show it to those who administer it (its owner
 * and the realm's administrators); it carries the bot's API key.
 */
export function toApiBot(u: PersonRow, realm: RealmRow, realmHost: string, apiKey: string): Record<string, unknown> {
  return {
    email: displayEmail(u, realm, realmHost),
    user_id: u.id,
    full_name: u.full_name,
    bot_type: u.bot_type,
    is_active: u.is_active,
    api_key: apiKey,
    default_sending_stream: null,
    default_events_register_stream: null,
    default_all_public_streams: false,
    avatar_url: avatarUrl(u, false, realm),
    services: [],
    owner_id: u.bot_owner_id,
  };
}

/** How a user looks to a viewer: display email, avatar URL, delivery_email, bot and profile fields. */
import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { avatarUrl, displayEmail, EMAIL_VISIBILITY_EVERYONE, toApiUser, toUserRecord } from '../../src/lib/user-view.js';
import type { RealmRow } from '../../src/store/realm-store.js';
import type { UserRow } from '../../src/store/user-store.js';

const realm = (email_address_visibility = EMAIL_VISIBILITY_EVERYONE): RealmRow => ({
  id: 1,
  subdomain: '',
  name: 'Elsinore',
  description: '',
  deactivated: false,
  email_address_visibility,
  settings: {},
  date_created: new Date('2024-01-01T00:00:00Z'),
  full_members_swept_at: new Date('2024-01-01T00:00:00Z'),
  revision: 0,
});
const ADMINS_ONLY = 3;

const user = (o: Partial<UserRow> = {}): UserRow => ({
  id: 10,
  realm_id: 1,
  delivery_email: 'Hamlet@Zulip.test',
  full_name: 'King Hamlet',
  role: Role.MEMBER,
  is_active: true,
  is_bot: false,
  bot_type: null,
  bot_owner_id: null,
  timezone: 'Europe/Copenhagen',
  avatar_source: 'G',
  avatar_version: 3,
  date_joined: new Date('2024-02-03T04:05:06Z'),
  password_hash: 'scrypt$...',
  api_key_enc: Buffer.from('secret'),
  can_create_users: false,
  is_system_bot: false,
  settings: {},
  drafts_cleared_at: null,
  ...o,
});

const view = (o: Partial<Parameters<typeof toApiUser>[2]> = {}) => ({
  viewerRole: Role.MEMBER,
  clientGravatar: false,
  includeCustomProfileFields: false,
  realmHost: 'zulip.test',
  ...o,
});

t.test('displayEmail hides the real address when the realm limits visibility', async (t) => {
  t.equal(displayEmail(user(), realm(), 'zulip.test'), 'Hamlet@Zulip.test');
  t.equal(displayEmail(user(), realm(ADMINS_ONLY), 'zulip.test'), 'user10@zulip.test');
});

t.test('avatarUrl', async (t) => {
  // md5("hamlet@zulip.test"): the address is lower-cased before hashing, as Gravatar wants.
  const gravatar = avatarUrl(user(), false, realm());
  t.match(gravatar, /^https:\/\/secure\.gravatar\.com\/avatar\/[0-9a-f]{32}\?d=identicon&version=3$/);
  t.equal(avatarUrl(user({ delivery_email: 'hamlet@zulip.test' }), false, realm()), gravatar, 'case does not change the hash');
  t.equal(avatarUrl(user(), true, realm()), null, 'client_gravatar: the client computes it');
  t.equal(avatarUrl(user(), true, realm(ADMINS_ONLY)), gravatar, 'but not when the client cannot see the address to hash');
  t.equal(avatarUrl(user({ avatar_source: 'U' }), true, realm()), '/user_avatars/Hamlet@Zulip.test?version=3', 'uploaded avatars are ours to serve');
});

t.test('toApiUser', async (t) => {
  const member = toApiUser(user(), realm(), view());
  t.same(member, {
    user_id: 10,
    email: 'Hamlet@Zulip.test',
    full_name: 'King Hamlet',
    date_joined: '2024-02-03T04:05:06.000Z',
    is_active: true,
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_billing_admin: false,
    is_bot: false,
    bot_type: null,
    role: 400,
    timezone: 'Europe/Copenhagen',
    avatar_url: avatarUrl(user(), false, realm()),
    avatar_version: 3,
  });
  t.notOk('password_hash' in member || 'api_key_enc' in member, 'credentials never leave');

  t.test('role flags', async (t) => {
    t.match(toApiUser(user({ role: Role.OWNER }), realm(), view()), { is_owner: true, is_admin: true, is_guest: false, role: 100 });
    t.match(toApiUser(user({ role: Role.ADMINISTRATOR }), realm(), view()), { is_owner: false, is_admin: true });
    t.match(toApiUser(user({ role: Role.MODERATOR }), realm(), view()), { is_admin: false, role: 300 });
    t.match(toApiUser(user({ role: Role.GUEST }), realm(), view()), { is_guest: true, is_admin: false });
  });

  t.test('delivery_email: only where it differs from email, and only for administrators', async (t) => {
    t.notOk('delivery_email' in toApiUser(user(), realm(), view({ viewerRole: Role.OWNER })), 'everyone sees the email anyway');
    const limited = realm(ADMINS_ONLY);
    t.notOk('delivery_email' in toApiUser(user(), limited, view({ viewerRole: Role.MEMBER })));
    t.notOk('delivery_email' in toApiUser(user(), limited, view({ viewerRole: Role.MODERATOR })));
    t.match(toApiUser(user(), limited, view({ viewerRole: Role.ADMINISTRATOR })), { email: 'user10@zulip.test', delivery_email: 'Hamlet@Zulip.test' });
  });

  t.test('bots carry their owner, never profile data', async (t) => {
    const bot = toApiUser(user({ is_bot: true, bot_type: 1, bot_owner_id: 5 }), realm(), view({ includeCustomProfileFields: true }));
    t.match(bot, { is_bot: true, bot_type: 1, bot_owner_id: 5 });
    t.notOk('profile_data' in bot);
  });

  t.test('profile_data holds the user\'s own values, rendered where rendered', async (t) => {
    const profileValues = new Map([
      [
        10,
        [
          { user_id: 10, field_id: 1, value: 'Denmark', rendered_value: null },
          { user_id: 10, field_id: 2, value: '**bold**', rendered_value: '<p><strong>bold</strong></p>' },
        ],
      ],
      [11, [{ user_id: 11, field_id: 1, value: 'Not mine', rendered_value: null }]],
    ]);
    t.same(toApiUser(user(), realm(), view({ includeCustomProfileFields: true, profileValues })).profile_data, {
      1: { value: 'Denmark' },
      2: { value: '**bold**', rendered_value: '<p><strong>bold</strong></p>' },
    });
    t.notOk('profile_data' in toApiUser(user(), realm(), view({ profileValues })), 'only when asked for');
  });
});

t.test('toUserRecord is the read-model shape, with both emails', async (t) => {
  t.same(toUserRecord(user(), realm(ADMINS_ONLY), 'zulip.test'), {
    user_id: 10,
    realm_id: 1,
    email: 'user10@zulip.test',
    delivery_email: 'Hamlet@Zulip.test',
    full_name: 'King Hamlet',
    role: 400,
    is_active: true,
    is_bot: false,
    bot_type: null,
    bot_owner_id: null,
    timezone: 'Europe/Copenhagen',
    avatar_source: 'G',
    avatar_version: 3,
    date_joined: '2024-02-03T04:05:06.000Z',
    is_system_bot: false,
  });
});

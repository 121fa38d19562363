import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { Policy, canAccessStream, canCreateStream, canSeeStream, canSubscribeOthers, hasPolicyPermission, type RealmPolicies } from '../../src/lib/policy.js';

const DAY = 24 * 3600 * 1000;
const veteran = (role: number) => ({ role, date_joined: new Date(Date.now() - 100 * DAY) });
const newcomer = (role: number) => ({ role, date_joined: new Date(Date.now() - DAY) });

t.test('realm policies by role (Zulip’s has_permission)', async (t) => {
  const table: Array<[number, number, boolean]> = [
    [Policy.MEMBERS_ONLY, Role.MEMBER, true],
    [Policy.MEMBERS_ONLY, Role.GUEST, false],
    [Policy.ADMINS_ONLY, Role.MODERATOR, false],
    [Policy.ADMINS_ONLY, Role.ADMINISTRATOR, true],
    [Policy.MODERATORS_ONLY, Role.MODERATOR, true],
    [Policy.MODERATORS_ONLY, Role.MEMBER, false],
    [Policy.EVERYONE, Role.GUEST, true],
    [Policy.NOBODY, Role.OWNER, false],
    [Policy.OWNERS_ONLY, Role.ADMINISTRATOR, false],
    [Policy.OWNERS_ONLY, Role.OWNER, true],
  ];
  for (const [policy, role, allowed] of table) t.equal(hasPolicyPermission(veteran(role), policy, 0), allowed, `policy ${policy}, role ${role}`);
  t.equal(hasPolicyPermission(newcomer(Role.MEMBER), Policy.FULL_MEMBERS_ONLY, 3), false, 'a member within the waiting period is not a full member');
  t.equal(hasPolicyPermission(veteran(Role.MEMBER), Policy.FULL_MEMBERS_ONLY, 3), true);
  t.equal(hasPolicyPermission(newcomer(Role.MODERATOR), Policy.FULL_MEMBERS_ONLY, 3), true, 'moderators need no waiting period');
});

const realm: RealmPolicies = {
  create_public_stream_policy: Policy.MEMBERS_ONLY,
  create_private_stream_policy: Policy.ADMINS_ONLY,
  create_web_public_stream_policy: Policy.OWNERS_ONLY,
  invite_to_stream_policy: Policy.MEMBERS_ONLY,
  waiting_period_threshold: 0,
  enable_spectator_access: true,
};

t.test('creating streams and subscribing others', async (t) => {
  t.ok(canCreateStream(veteran(Role.MEMBER), realm, { invite_only: false, is_web_public: false }));
  t.notOk(canCreateStream(veteran(Role.MEMBER), realm, { invite_only: true, is_web_public: false }), 'private needs the private-stream policy');
  t.notOk(canCreateStream(veteran(Role.GUEST), { ...realm, create_public_stream_policy: Policy.EVERYONE }, { invite_only: false, is_web_public: false }), 'guests never create streams');
  t.notOk(canCreateStream(veteran(Role.ADMINISTRATOR), realm, { invite_only: false, is_web_public: true }), 'web-public needs its own policy');
  t.ok(canCreateStream(veteran(Role.OWNER), realm, { invite_only: false, is_web_public: true }));
  t.ok(canSubscribeOthers(veteran(Role.MEMBER), realm));
  t.notOk(canSubscribeOthers(veteran(Role.GUEST), { ...realm, invite_to_stream_policy: Policy.EVERYONE }));
  t.notOk(canSubscribeOthers(veteran(Role.MEMBER), { ...realm, invite_to_stream_policy: Policy.ADMINS_ONLY }));
});

t.test('stream access and visibility', async (t) => {
  const pub = { invite_only: false, is_web_public: false };
  const priv = { invite_only: true, is_web_public: false };
  const web = { invite_only: false, is_web_public: true };
  t.ok(canAccessStream(Role.MEMBER, pub, false));
  t.notOk(canAccessStream(Role.GUEST, pub, false), 'guests only reach public streams they are subscribed to');
  t.ok(canAccessStream(Role.GUEST, pub, true));
  t.ok(canAccessStream(Role.GUEST, web, false));
  t.notOk(canAccessStream(Role.OWNER, priv, false), 'no content access to private streams without a subscription');
  t.ok(canAccessStream(Role.MEMBER, priv, true));
  t.ok(canSeeStream(Role.ADMINISTRATOR, priv, false), 'administrators see private streams’ metadata');
  t.notOk(canSeeStream(Role.MODERATOR, priv, false));
});

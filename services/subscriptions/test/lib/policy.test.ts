import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { Policy, realmSettings } from '@zc/shared/policy';
import { canAccessStream, canCreateStream, canSeeStream, canSubscribeOthers } from '../../src/lib/policy.js';

const DAY = 24 * 3600 * 1000;
const veteran = (role: number) => ({ role, date_joined: new Date(Date.now() - 100 * DAY) });

const realm = realmSettings({
  create_public_stream_policy: Policy.MEMBERS_ONLY,
  create_private_stream_policy: Policy.ADMINS_ONLY,
  create_web_public_stream_policy: Policy.OWNERS_ONLY,
  invite_to_stream_policy: Policy.MEMBERS_ONLY,
  waiting_period_threshold: 0,
});

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

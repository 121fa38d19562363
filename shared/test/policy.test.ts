import t from 'tap';
import { Policy, REALM_SETTING_DEFAULTS, Role, canAdministerStreams, deleteMessageRefusal, hasPolicyPermission, isNewMember, realmSettings } from '../src/policy/index.js';

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
  t.equal(hasPolicyPermission(newcomer(Role.GUEST), Policy.FULL_MEMBERS_ONLY, 0), false, 'guests are never full members');
});

t.test('the waiting period makes only members new', async (t) => {
  t.ok(isNewMember(newcomer(Role.MEMBER), 3));
  t.notOk(isNewMember(newcomer(Role.MEMBER), 0), 'no waiting period');
  t.notOk(isNewMember(veteran(Role.MEMBER), 3));
  t.notOk(isNewMember(newcomer(Role.ADMINISTRATOR), 3));
  t.notOk(isNewMember(newcomer(Role.GUEST), 3), 'guests are refused by their role, not as new members');
});

t.test('realm settings read over the defaults', async (t) => {
  const s = realmSettings({ waiting_period_threshold: 4, message_content_edit_limit_seconds: null, custom: 'x' });
  t.equal(s.waiting_period_threshold, 4);
  t.equal(s.message_content_edit_limit_seconds, null, 'null is a value (no limit), not a missing setting');
  t.equal(s.edit_topic_policy, REALM_SETTING_DEFAULTS.edit_topic_policy);
  t.equal(s.custom, 'x', 'settings without a default pass through');
});

t.test('who may delete a message (Zulip’s validate_can_delete_message)', async (t) => {
  const now = new Date();
  const sent = (secondsAgo: number, sender_id: number, sender_bot_owner_id: number | null = null) => ({ sender_id, sender_bot_owner_id, date_sent: new Date(now.getTime() - secondsAgo * 1000) });
  const realm = (policy: number, limit: number | null) => ({ delete_own_message_policy: policy, message_content_delete_limit_seconds: limit, waiting_period_threshold: 3 });
  const member = { id: 10, ...veteran(Role.MEMBER) };
  const admin = { id: 11, ...veteran(Role.ADMINISTRATOR) };
  t.equal(deleteMessageRefusal(admin, sent(1e9, 10), realm(Policy.NOBODY, 60), now), undefined, 'an administrator deletes anything, any time');
  t.equal(deleteMessageRefusal(member, sent(5, 12), realm(Policy.EVERYONE, null), now), 'not_allowed', "someone else's message");
  t.equal(deleteMessageRefusal(member, sent(5, 12, 10), realm(Policy.EVERYONE, null), now), undefined, "one's bot's message");
  t.equal(deleteMessageRefusal(member, sent(5, 10), realm(Policy.ADMINS_ONLY, null), now), 'not_allowed', 'the realm lets only administrators delete');
  t.equal(deleteMessageRefusal(member, sent(5, 10), realm(Policy.MEMBERS_ONLY, null), now), undefined);
  t.equal(deleteMessageRefusal(member, sent(61, 10), realm(Policy.MEMBERS_ONLY, 60), now), 'time_limit');
  t.equal(deleteMessageRefusal(member, sent(59, 10), realm(Policy.MEMBERS_ONLY, 60), now), undefined);
  t.equal(deleteMessageRefusal({ id: 10, ...newcomer(Role.MEMBER) }, sent(5, 10), realm(Policy.FULL_MEMBERS_ONLY, null), now), 'not_allowed', 'not yet a full member');
  t.equal(deleteMessageRefusal({ id: 10, ...veteran(Role.GUEST) }, sent(5, 10), realm(Policy.MEMBERS_ONLY, null), now), 'not_allowed', 'guests are not members');
});

t.test('only administrators administer streams', async (t) => {
  t.ok(canAdministerStreams({ role: Role.OWNER }));
  t.ok(canAdministerStreams({ role: Role.ADMINISTRATOR }));
  t.notOk(canAdministerStreams({ role: Role.MODERATOR }));
  t.notOk(canAdministerStreams({ role: Role.MEMBER }));
});

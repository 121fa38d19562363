import t from 'tap';
import { Policy, REALM_SETTING_DEFAULTS, Role, hasPolicyPermission, isNewMember, realmSettings } from '../src/policy/index.js';

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

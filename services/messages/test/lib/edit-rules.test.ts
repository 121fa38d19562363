import t from 'tap';
import { Role } from '@zc/shared/contracts';
import { isAppError } from '@zc/shared/errors';
import { Policy, hasPolicyPermission, realmSettings } from '@zc/shared/policy';
import { checkEditPayload, checkEditPermission, moveNotices, topicResolution } from '../../src/lib/edit-rules.js';
import { htmlDiff } from '../../src/lib/html-diff.js';

const now = new Date('2024-01-10T12:00:00Z');
const streamMsg = { sender_id: 1, stream_id: 5, topic: 'castle', date_sent: new Date(now.getTime() - 60_000) };
const dm = { ...streamMsg, stream_id: null, topic: '' };
const member = { user_id: 1, role: Role.MEMBER, date_joined: new Date('2020-01-01') };
const other = { user_id: 2, role: Role.MEMBER, date_joined: new Date('2020-01-01') };
const admin = { user_id: 3, role: Role.ADMINISTRATOR, date_joined: new Date('2020-01-01') };
const defaults = realmSettings({});

function errorOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isAppError(e)) return e.message;
    throw e;
  }
  return undefined;
}

t.test('payload rules in Zulip order', async (t) => {
  const cases: Array<[typeof streamMsg | typeof dm, Parameters<typeof checkEditPayload>[1], string]> = [
    [streamMsg, { propagate_mode: 'change_one' }, 'Nothing to change'],
    [streamMsg, { propagate_mode: 'change_one', topic: ' castle ' }, 'Nothing to change'],
    [dm, { propagate_mode: 'change_one', stream_id: 5 }, 'Direct messages cannot be moved to channels.'],
    [dm, { propagate_mode: 'change_one', topic: 'x' }, 'Direct messages cannot have topics.'],
    [streamMsg, { propagate_mode: 'change_all', content: 'x' }, 'Invalid propagate_mode without topic edit'],
    [streamMsg, { propagate_mode: 'change_one', content: 'x', stream_id: 6 }, 'Cannot change message content while changing channel'],
  ];
  for (const [m, r, msg] of cases) t.equal(errorOf(() => checkEditPayload(m, r)), msg, msg);
  t.same(checkEditPayload(streamMsg, { propagate_mode: 'change_all', topic: ' new ', stream_id: 5 }), { topic: 'new', propagate_mode: 'change_all' });
});

t.test('content: only the sender, administrators included, within the limit', async (t) => {
  t.equal(errorOf(() => checkEditPermission(member, streamMsg, { content: 'x', propagate_mode: 'change_one' }, defaults, now)), undefined);
  t.equal(errorOf(() => checkEditPermission(admin, streamMsg, { content: 'x', propagate_mode: 'change_one' }, defaults, now)), "You don't have permission to edit this message");
  const old = { ...streamMsg, date_sent: new Date(now.getTime() - 621_000) };
  t.equal(errorOf(() => checkEditPermission(member, old, { content: 'x', propagate_mode: 'change_one' }, defaults, now)), 'The time limit for editing this message has passed');
  t.equal(errorOf(() => checkEditPermission(member, old, { content: 'x', propagate_mode: 'change_one' }, realmSettings({ message_content_edit_limit_seconds: null }), now)), undefined);
  t.equal(errorOf(() => checkEditPermission(member, streamMsg, { content: 'x', propagate_mode: 'change_one' }, realmSettings({ allow_message_editing: false }), now)), 'Your organization has turned off message editing');
});

t.test('topics and moves follow the realm policies', async (t) => {
  const topic = { topic: 'new', propagate_mode: 'change_one' as const };
  t.equal(errorOf(() => checkEditPermission(other, streamMsg, topic, defaults, now)), undefined, 'edit_topic_policy everyone');
  t.equal(errorOf(() => checkEditPermission(other, streamMsg, topic, realmSettings({ edit_topic_policy: Policy.ADMINS_ONLY }), now)), "You don't have permission to edit this message");
  t.equal(errorOf(() => checkEditPermission(admin, streamMsg, topic, realmSettings({ edit_topic_policy: Policy.ADMINS_ONLY }), now)), undefined);
  const ancient = { ...streamMsg, date_sent: new Date(now.getTime() - 4 * 24 * 3600 * 1000) };
  t.equal(errorOf(() => checkEditPermission(other, ancient, topic, defaults, now)), "The time limit for editing this message's topic has passed");
  const move = { stream_id: 6, propagate_mode: 'change_one' as const };
  t.equal(errorOf(() => checkEditPermission(member, streamMsg, move, defaults, now)), "You don't have permission to move this message");
  t.equal(errorOf(() => checkEditPermission(admin, streamMsg, move, defaults, now)), undefined);
  t.equal(hasPolicyPermission({ ...member, date_joined: now }, Policy.FULL_MEMBERS_ONLY, 3, now), false, 'a new member is not a full member');
  t.equal(hasPolicyPermission({ ...member, role: Role.GUEST }, Policy.MEMBERS_ONLY, 0, now), false);
});

t.test('resolving, and the move notices', async (t) => {
  t.equal(topicResolution('castle', '✔ castle'), 'resolved');
  t.equal(topicResolution('✔ castle', 'castle'), 'unresolved');
  t.equal(topicResolution('castle', '✔ moat'), null);
  t.same(moveNotices({ user: 'U', oldLocation: 'O', newLocation: 'N', movedCount: 2, movedAll: false }), {
    old: '2 messages were moved from this topic to N by U.',
    new: '2 messages were moved here from O by U.',
  });
});

t.test('the html diff highlights words and keeps the newer markup', async (t) => {
  t.equal(htmlDiff('<p>hello old world</p>', '<p>hello new world</p>'), '<p>hello <span class="highlight_text_inserted">new</span><span class="highlight_text_deleted">old</span> world</p>');
});

/**
 * Muted users (FL 48): Zulip's errors, the /register list with its timestamps, the
 * muted_users events through the apply-events check, and the server-side effects: the muted
 * user's unread messages to the muter are marked read at once, and their new ones arrive read.
 */
import t from 'tap';
import type { Account } from '../harness.js';
import { startSystem } from '../harness.js';
import type { Params } from '../client.js';
import { verifyAction } from './events-verify.js';

type Json = Record<string, unknown>;

t.test('muted users', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, polonius, iago, bot } = sys.people;
  const h = sys.client(hamlet);
  const base: Params = { client_gravatar: false, apply_markdown: true };

  const dm = async (from: Account, to: Account, content: string) => {
    const r = await sys.client(from).post('/messages', { type: 'private', to: [to.user_id], content });
    t.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.id as number;
  };
  const flagsOf = async (who: Account, id: number) => ((await sys.client(who).get(`/messages/${id}`)).body.message as Json).flags as string[];

  t.test("Zulip's errors", async (t) => {
    const refused = async (method: 'post' | 'delete', id: number | string, msg: string) => {
      const r = await h[method](`/users/me/muted_users/${id}`);
      t.equal(r.status, 400, `${method} ${id}`);
      t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
    };
    await refused('post', hamlet.user_id, 'Cannot mute self');
    await refused('post', 999_999, 'No such user');
    await refused('post', bot.user_id, 'No such user');
    await refused('delete', 999_999, 'No such user');
    await refused('delete', polonius.user_id, 'User is not muted');
    const bad = await h.post('/users/me/muted_users/abc');
    t.equal(bad.status, 400, 'a non-numeric id is refused');
    t.equal((await h.post(`/users/me/muted_users/${polonius.user_id}`)).status, 200);
    await refused('post', polonius.user_id, 'User already muted');
    t.equal((await h.delete(`/users/me/muted_users/${polonius.user_id}`)).status, 200);
    await refused('delete', polonius.user_id, 'User is not muted');
  });

  t.test('register lists the muted users with the time of muting; another user sees only their own', async (t) => {
    const before = Math.floor(Date.now() / 1000);
    t.equal((await h.post(`/users/me/muted_users/${iago.user_id}`)).status, 200);
    const state = (await h.post('/register', { fetch_event_types: ['muted_users'] })).body;
    const list = state.muted_users as Array<{ id: number; timestamp: number }>;
    t.same(list.map((m) => m.id), [iago.user_id]);
    t.ok(list[0]!.timestamp >= before - 1 && list[0]!.timestamp <= Math.ceil(Date.now() / 1000), 'timestamp of the mute');
    const other = (await sys.client(othello).post('/register', { fetch_event_types: ['muted_users'] })).body;
    t.same(other.muted_users, []);
    t.equal((await h.delete(`/users/me/muted_users/${iago.user_id}`)).status, 200);
  });

  t.test('muting marks what the muted user sent as read; new messages arrive read; unmuting ends that', async (t) => {
    const unread = [await dm(othello, hamlet, 'first'), await dm(othello, hamlet, 'second')];
    const fromOthers = await dm(polonius, hamlet, 'not muted');
    const params = { ...base, event_types: ['muted_users', 'message', 'update_message_flags'], fetch_event_types: ['muted_users', 'message', 'update_message_flags'] };
    // The flags change comes from the messages service, in no fixed order with muted_users: it has its own check below.
    const mutedOnly = { ...base, event_types: ['muted_users'], fetch_event_types: ['muted_users'] };
    const events = await verifyAction(t, sys, h, () => h.post(`/users/me/muted_users/${othello.user_id}`), { params: mutedOnly, expect: ['muted_users'] });
    t.same((events[0]!.muted_users as Json[]).map((m) => m.id), [othello.user_id]);
    for (const id of unread) t.same(await flagsOf(hamlet, id), ['read'], `message ${id} marked read by the mute`);
    t.same(await flagsOf(hamlet, fromOthers), [], "another sender's message stays unread");

    let sent = 0;
    const arrived = await verifyAction(t, sys, h, async () => (sent = await dm(othello, hamlet, 'after the mute')), { params, expect: ['message'] });
    t.same(arrived[0]!.flags, ['read'], 'the message event says read');
    t.same(await flagsOf(hamlet, sent), ['read']);

    await verifyAction(t, sys, h, () => h.delete(`/users/me/muted_users/${othello.user_id}`), { params: mutedOnly, expect: ['muted_users'] });
    const later = await dm(othello, hamlet, 'after unmuting');
    t.same(await flagsOf(hamlet, later), [], 'unread again after unmuting');
  });

  t.test('muting sends the flags change to the muter', async (t) => {
    // Polonius's message of the test before is still unread too.
    const unread = (await h.get('/messages', { anchor: 'newest', num_before: 50, num_after: 0, narrow: [{ operator: 'is', operand: 'unread' }] })).body.messages as Json[];
    const earlier = unread.filter((m) => m.sender_id === polonius.user_id).map((m) => m.id as number);
    t.ok(earlier.length > 0, 'an unread message from polonius');
    const fresh = await dm(polonius, hamlet, 'to be muted');
    const params = { ...base, event_types: ['update_message_flags'], fetch_event_types: ['message', 'update_message_flags'] };
    const events = await verifyAction(t, sys, h, () => h.post(`/users/me/muted_users/${polonius.user_id}`), { params, expect: ['update_message_flags/add'] });
    t.same(events[0], { ...events[0], flag: 'read', messages: [...earlier, fresh], all: false });
    t.equal((await h.delete(`/users/me/muted_users/${polonius.user_id}`)).status, 200);
  });
});

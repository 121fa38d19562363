/**
 * GET /messages/{message_id}/read_receipts (feature level 137): who has read a message, as
 * Zulip answers it (the sender never, users who do not share read receipts never, bots and
 * the requester when they have read it, muted users never), the realm switch, and access.
 */
import t from 'tap';
import { startSystem, type Account } from '../harness.js';
import { messagesWorld } from './messages-fixtures.js';

t.test('messages: read receipts', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius, bot } = sys.people;
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id, iago.user_id, desdemona.user_id]);
  await w.createStream('Secret', [hamlet.user_id, iago.user_id], { invite_only: true });

  const send = async (who: Account, p: Record<string, unknown>) => {
    const r = await sys.client(who).post('/messages', p as never);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const markRead = async (who: Account, id: number) => {
    const r = await sys.client(who).post('/messages/flags', { messages: [id], op: 'add', flag: 'read' });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };
  const receipts = (who: Account, id: number | string) => sys.client(who).get(`/messages/${id}/read_receipts`);
  const setSharing = async (who: Account, on: boolean) => {
    const r = await sys.client(who).patch('/settings', { send_read_receipts: on });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };

  const stream = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'receipts', content: 'who reads this?' });
  const secret = await send(hamlet, { type: 'stream', to: 'Secret', topic: 'receipts', content: 'not for everyone' });

  t.test('readers other than the sender, the requester included', async (t) => {
    t.same((await receipts(hamlet, stream)).body, { result: 'success', msg: '', user_ids: [] }, 'nobody has read it yet');
    await markRead(othello, stream);
    await markRead(iago, stream);
    await markRead(hamlet, stream);
    const byHamlet = await receipts(hamlet, stream);
    t.equal(byHamlet.status, 200);
    t.same(byHamlet.body.user_ids, [othello.user_id, iago.user_id].sort((a, b) => a - b), 'the sender is never listed; desdemona has not read it');
    t.same((await receipts(othello, stream)).body.user_ids, [othello.user_id, iago.user_id].sort((a, b) => a - b), 'the requester is listed');
    const unread = await sys.client(iago).post('/messages/flags', { messages: [stream], op: 'remove', flag: 'read' });
    t.equal(unread.status, 200);
    t.same((await receipts(hamlet, stream)).body.user_ids, [othello.user_id], 'marked unread again: no longer listed');
  });

  t.test('send_read_receipts off hides the user at once, on shows them again', async (t) => {
    await setSharing(othello, false);
    t.same((await receipts(hamlet, stream)).body.user_ids, []);
    t.same((await receipts(othello, stream)).body.user_ids, [], 'not even to themselves, as in Zulip');
    await setSharing(othello, true);
    t.same((await receipts(hamlet, stream)).body.user_ids, [othello.user_id]);
  });

  t.test('muted users: neither the ones the requester muted nor the ones who muted them', async (t) => {
    const mute = (who: Account, whom: Account) => sys.client(who).post(`/users/me/muted_users/${whom.user_id}`);
    const unmute = (who: Account, whom: Account) => sys.client(who).delete(`/users/me/muted_users/${whom.user_id}`);
    t.equal((await mute(hamlet, othello)).status, 200);
    t.same((await receipts(hamlet, stream)).body.user_ids, [], 'muted by the requester');
    t.same((await receipts(desdemona, stream)).body.user_ids, [othello.user_id], 'others still see them');
    t.equal((await unmute(hamlet, othello)).status, 200);
    t.equal((await mute(othello, desdemona)).status, 200);
    t.same((await receipts(desdemona, stream)).body.user_ids, [], 'the reader muted the requester');
    t.same((await receipts(hamlet, stream)).body.user_ids, [othello.user_id]);
    t.equal((await unmute(othello, desdemona)).status, 200);
  });

  t.test('a bot that marks a message read is listed', async (t) => {
    const dm = await send(hamlet, { type: 'private', to: [bot.user_id, othello.user_id], content: 'process this' });
    await markRead(bot, dm);
    t.same((await receipts(othello, dm)).body.user_ids, [bot.user_id]);
  });

  t.test('a message the user may not read, or none at all', async (t) => {
    const cases: [Account, number | string][] = [
      [othello, secret],
      [polonius, stream],
      [othello, 999_999_999],
      [othello, 'abc'],
    ];
    for (const [who, id] of cases) {
      const r = await receipts(who, id);
      t.equal(r.status, 400, `${who.email} ${id}`);
      t.same(r.body, { result: 'error', msg: 'Invalid message(s)', code: 'BAD_REQUEST' });
    }
    t.same((await receipts(iago, secret)).body.user_ids, [], 'a subscriber may ask');
  });

  t.test('the realm can turn read receipts off', async (t) => {
    const off = await sys.client(iago).patch('/realm', { enable_read_receipts: false });
    t.equal(off.status, 200, JSON.stringify(off.body));
    const r = await receipts(hamlet, stream);
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', msg: 'Read receipts are disabled in this organization.', code: 'BAD_REQUEST' });
    t.equal((await sys.client(iago).patch('/realm', { enable_read_receipts: true })).status, 200);
    t.equal((await receipts(hamlet, stream)).status, 200);
  });
});

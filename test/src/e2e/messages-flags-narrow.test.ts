/**
 * POST /messages/flags/narrow (feature level 155): the range of a narrow around an anchor,
 * what it answers about it, the events it sends (checked by applying them to /register
 * state), history, and its errors.
 */
import t from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem, type Account } from '../harness.js';
import { verifyAction } from './events-verify.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('messages: flags over a narrow', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const db = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => db.end());
  const rowsOf = async (who: Account, messageIds: number[]) =>
    (await db.query<{ message_id: number }>('SELECT message_id FROM messages.user_message WHERE user_id = $1 AND message_id = ANY($2::bigint[])', [who.user_id, messageIds])).rows;
  const { hamlet, othello, iago, polonius } = sys.people;
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id]);
  await w.createStream('Secret', [hamlet.user_id], { invite_only: true });

  const send = async (who: Account, to: string, topic: string, content: string) => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to, topic, content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const ids: number[] = [];
  for (const n of [1, 2, 3, 4, 5]) ids.push(await send(hamlet, 'Denmark', 'range', `message ${n}`));
  const other = await send(hamlet, 'Denmark', 'elsewhere', 'not in the topic');
  const secret = await send(hamlet, 'Secret', 'hidden', 'private words');
  const topic = [{ operator: 'stream', operand: 'Denmark' }, { operator: 'topic', operand: 'range' }];
  const narrowFlags = (who: Account, p: Record<string, unknown>) => sys.client(who).post('/messages/flags/narrow', p as never);
  const flagsOf = async (who: Account, id: number) => {
    const r = await sys.client(who).get('/messages', { anchor: id, num_before: 0, num_after: 0, narrow: [['id', String(id)]] });
    return (r.body.messages as Msg[])[0]?.flags as string[] | undefined;
  };
  const params = { fetch_event_types: ['message', 'update_message_flags'] };

  t.test('marks a range read from the oldest end, then the rest, with events that keep unread counts right', async (t) => {
    const c = sys.client(othello);
    let first: Record<string, unknown> = {};
    await verifyAction(t, sys, c, async () => {
      first = (await narrowFlags(othello, { anchor: 'oldest', num_before: 0, num_after: 2, narrow: topic, op: 'add', flag: 'read' })).body;
    }, { params, expect: ['update_message_flags/add'] });
    t.same(first, {
      result: 'success',
      msg: '',
      processed_count: 2,
      updated_count: 2,
      first_processed_id: ids[0],
      last_processed_id: ids[1],
      found_oldest: true,
      found_newest: false,
    });
    t.same(await flagsOf(othello, ids[1]!), ['read']);
    t.same(await flagsOf(othello, ids[2]!), []);
    t.same(await flagsOf(othello, other), [], 'another topic is left alone');

    const again = await narrowFlags(othello, { anchor: 'oldest', num_before: 0, num_after: 2, narrow: topic, op: 'add', flag: 'read' });
    t.match(again.body, { processed_count: 2, updated_count: 0 }, 'read already: processed, not updated');

    // A client going on from last_processed_id, as the web app does.
    let rest: Record<string, unknown> = {};
    const events = await verifyAction(t, sys, c, async () => {
      rest = (await narrowFlags(othello, { anchor: ids[1], include_anchor: false, num_before: 0, num_after: 1000, narrow: topic, op: 'add', flag: 'read' })).body;
    }, { params, expect: ['update_message_flags/add'] });
    t.match(rest, { processed_count: 3, updated_count: 3, first_processed_id: ids[2], last_processed_id: ids[4], found_oldest: false, found_newest: true });
    t.same(events[0]?.messages, ids.slice(2));
  });

  t.test('removes read around an anchor and finds the first unread again', async (t) => {
    const r = await narrowFlags(othello, { anchor: ids[2], num_before: 1, num_after: 1, narrow: topic, op: 'remove', flag: 'read' });
    t.match(r.body, { result: 'success', processed_count: 3, updated_count: 3, first_processed_id: ids[1], last_processed_id: ids[3], found_oldest: false, found_newest: false });
    t.same(await flagsOf(othello, ids[0]!), ['read']);
    t.same(await flagsOf(othello, ids[2]!), []);
    const unreadNarrow = [...topic, { operator: 'is', operand: 'unread' }];
    const byFirstUnread = await narrowFlags(othello, { anchor: 'first_unread', num_before: 0, num_after: 0, narrow: unreadNarrow, op: 'add', flag: 'read' });
    t.match(byFirstUnread.body, { processed_count: 1, updated_count: 1, first_processed_id: ids[1], last_processed_id: ids[1] });
    const newest = await narrowFlags(othello, { anchor: 'newest', num_before: 10, num_after: 0, narrow: unreadNarrow, op: 'add', flag: 'read' });
    t.match(newest.body, { processed_count: 2, updated_count: 2, first_processed_id: ids[2], last_processed_id: ids[3], found_oldest: true, found_newest: true });
    const none = await narrowFlags(othello, { anchor: 'first_unread', num_before: 0, num_after: 5, narrow: unreadNarrow, op: 'add', flag: 'read' });
    t.same(none.body, {
      result: 'success',
      msg: '',
      processed_count: 0,
      updated_count: 0,
      first_processed_id: null,
      last_processed_id: null,
      found_oldest: false,
      found_newest: true,
    }, 'nothing unread: the anchor is past the newest message');
  });

  t.test('history: starring gives rows, read counts only rows the user has', async (t) => {
    const stream = [{ operator: 'stream', operand: 'Denmark' }];
    let starred: Record<string, unknown> = {};
    const events = await verifyAction(t, sys, sys.client(iago), async () => {
      starred = (await narrowFlags(iago, { anchor: 'newest', num_before: 1, num_after: 0, narrow: stream, op: 'add', flag: 'starred' })).body;
    }, { params: { fetch_event_types: ['starred_messages', 'update_message_flags'] }, expect: ['update_message_flags/add'] });
    t.match(starred, { processed_count: 1, updated_count: 1, first_processed_id: other, last_processed_id: other, found_newest: true });
    t.same(events[0]?.messages, [other]);
    t.same(await flagsOf(iago, other), ['read', 'starred', 'historical']);
    const read = await narrowFlags(iago, { anchor: 'oldest', num_before: 0, num_after: 100, narrow: stream, op: 'add', flag: 'read' });
    t.match(read.body, { processed_count: 1, updated_count: 0, first_processed_id: other }, 'only the starred message has a row');
    const unread = await narrowFlags(iago, { anchor: 'oldest', num_before: 0, num_after: 100, narrow: stream, op: 'remove', flag: 'read' });
    t.match(unread.body, { processed_count: 1, updated_count: 1 });
    t.same(await rowsOf(iago, ids), [], 'no rows for history the user only read');
  });

  t.test('what a user may not read is out of the range', async (t) => {
    const secretNarrow = [{ operator: 'stream', operand: 'Secret' }];
    const guest = await narrowFlags(polonius, { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'stream', operand: 'Denmark' }], op: 'add', flag: 'starred' });
    t.match(guest.body, { result: 'success', processed_count: 0, updated_count: 0, first_processed_id: null }, 'a guest not subscribed reads no public history');
    const outsider = await narrowFlags(othello, { anchor: 'newest', num_before: 10, num_after: 0, narrow: secretNarrow, op: 'add', flag: 'starred' });
    t.match(outsider.body, { result: 'success', processed_count: 0 });
    t.same(await rowsOf(othello, [secret]), [], 'no row for a private stream\'s message');
  });

  t.test('errors', async (t) => {
    const base = { anchor: 'newest', num_before: 1, num_after: 0, narrow: topic, op: 'add', flag: 'read' };
    const cases: [Record<string, unknown>, number, string, string][] = [
      [{ ...base, flag: 'bogus' }, 400, 'BAD_REQUEST', "Invalid flag: 'bogus'"],
      [{ ...base, flag: 'mentioned' }, 400, 'BAD_REQUEST', "Flag not editable: 'mentioned'"],
      [{ ...base, op: 'toggle' }, 400, 'BAD_REQUEST', "Invalid message flag operation: 'toggle'"],
      [{ ...base, anchor: 'middle' }, 400, 'BAD_REQUEST', 'Invalid anchor'],
      [{ ...base, num_before: 2, num_after: 2, include_anchor: false }, 400, 'BAD_REQUEST', 'The anchor can only be excluded at an end of the range'],
      [{ ...base, narrow: [{ operator: 'stream', operand: 'Atlantis' }] }, 400, 'BAD_REQUEST', 'Invalid narrow operator: unknown stream Atlantis'],
      [{ ...base, narrow: [{ operator: 'stream', operand: 'Secret' }], anchor: secret, num_before: 0 }, 200, '', ''],
    ];
    for (const [p, status, code, msg] of cases) {
      const r = await narrowFlags(othello, p);
      t.equal(r.status, status, JSON.stringify(p));
      if (status !== 200) t.match(r.body, { result: 'error', code, msg }, msg);
    }
    const missing = await sys.client(othello).post('/messages/flags/narrow', { num_before: 0, num_after: 0, narrow: [], op: 'add', flag: 'read' } as never);
    t.equal(missing.status, 400);
    t.match(missing.body, { result: 'error', code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'anchor' argument" });
    const negative = await narrowFlags(othello, { ...base, num_before: -1 });
    t.equal(negative.status, 400);
    t.match(negative.body, { result: 'error', code: 'BAD_REQUEST' });
  });
});

/**
 * Widgets end to end: a `/poll` or `/todo` message carries its widget as its first
 * submessage (in its message event and in history), POST /submessage adds votes and
 * options with Zulip's checks, the `submessage` event reaches those who may read the
 * message, and deleting the message takes its submessages with it.
 */
import t from 'tap';
import { Value } from '@sinclair/typebox/value';
import { SubmessageEvent } from '@zc/shared/contracts/client-events';
import { startSystem, type Account } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('widgets and submessages', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, desdemona, polonius } = sys.people;
  await w.createStream('Elsinore', [hamlet.user_id, othello.user_id, desdemona.user_id]);
  const send = async (who: Account, content: string) => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to: 'Elsinore', topic: 'watch', content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const submit = (who: Account, messageId: number, data: unknown) =>
    sys.client(who).post('/submessage', { message_id: messageId, msg_type: 'widget', content: typeof data === 'string' ? data : JSON.stringify(data) });
  const submessagesOf = async (who: Account, id: number) => ((await sys.client(who).get(`/messages/${id}`)).body.message as Msg).submessages as Msg[];

  const { poller: hamlets } = await QueuePoller.register(sys.client(hamlet), { event_types: ['message', 'submessage'] });
  const pollId = await send(othello, '/poll Who is there?\n- Bernardo\n* Francisco\nHoratio');
  const widget = {
    id: pollId,
    message_id: pollId,
    sender_id: othello.user_id,
    msg_type: 'widget',
    content: JSON.stringify({ widget_type: 'poll', extra_data: { question: 'Who is there?', options: ['Bernardo', 'Francisco', 'Horatio'] } }),
  };
  const [sent] = await hamlets.collect(1);
  t.same((sent?.message as Msg).submessages, [widget], "the message event carries the widget, as the message's first submessage");

  t.same((await submit(desdemona, pollId, { type: 'vote', key: 'canned,0', vote: 1 })).body, { result: 'success', msg: '' });
  const [voted] = await hamlets.collect(1);
  t.ok(Value.Check(SubmessageEvent, voted), 'the submessage event has its declared shape');
  t.match(voted, { type: 'submessage', msg_type: 'widget', message_id: pollId, sender_id: desdemona.user_id, content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }) });
  const stored = await submessagesOf(hamlet, pollId);
  t.same(stored, [widget, { id: voted?.submessage_id, message_id: pollId, sender_id: desdemona.user_id, msg_type: 'widget', content: JSON.stringify({ type: 'vote', key: 'canned,0', vote: 1 }) }], 'history shows the widget, then the vote');
  t.ok((stored[1]?.id as number) > pollId, "a vote's id sorts after the widget's");
  const page = await sys.client(hamlet).get('/messages', { anchor: pollId, num_before: 0, num_after: 0, narrow: [['stream', 'Elsinore']] } as never);
  t.same((page.body.messages as Msg[])[0]?.submessages, stored, 'GET /messages carries them too');

  const expectError = async (who: Account, id: number, data: unknown, msg: string) => {
    const r = await submit(who, id, data);
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };
  await expectError(desdemona, pollId, '{"type": vote', 'Invalid json for submessage');
  await expectError(desdemona, pollId, { type: 'question', question: 'Who goes there?' }, "You can't edit a question unless you are the author.");
  await expectError(desdemona, pollId, { type: 'vote', key: 'canned,0', vote: '1' }, 'poll data["vote"] is not an integer');
  await expectError(desdemona, pollId, { type: 'vote', key: 'canned,0', vote: 1, weight: 2 }, 'Unexpected arguments: weight');
  t.equal((await submit(othello, pollId, { type: 'question', question: 'Who goes there?' })).status, 200, "the poll's author may change its question");
  const plain = await send(othello, 'no widget here');
  await expectError(desdemona, plain, { type: 'vote', key: 'canned,0', vote: 1 }, 'You cannot attach a submessage to this message.');
  await expectError(polonius, pollId, { type: 'vote', key: 'canned,0', vote: 1 }, 'Invalid message(s)');
  t.same(await submessagesOf(hamlet, plain), [], 'no submessage was stored on a refusal');

  const todoId = await send(hamlet, '/todo');
  t.same(await submessagesOf(othello, todoId), [
    { id: todoId, message_id: todoId, sender_id: hamlet.user_id, msg_type: 'widget', content: JSON.stringify({ widget_type: 'todo', extra_data: null }) },
  ]);
  t.equal((await submit(othello, todoId, { type: 'new_task', key: 1, task: 'bread', desc: '', completed: false })).status, 200);
  await expectError(othello, todoId, { type: 'new_task', key: 1, task: 'bread' }, 'desc key is missing from todo data');

  // Only the sender may start submessages on an ordinary message; then anyone may add.
  t.equal((await submit(othello, plain, { anything: 'goes' })).status, 200, 'the sender attaches the first');
  t.equal((await submit(hamlet, plain, { anything: 'else' })).status, 200, 'then another reader may');

  t.equal((await sys.client(desdemona).delete(`/messages/${pollId}`)).status, 200);
  await w.until('SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM messages.submessage WHERE message_id = $1)', [pollId]);
  t.pass('deleting the message deleted its submessages');
});

/**
 * POST /streams/{stream_id}/delete_topic: administrators delete a topic's messages in batches,
 * newest first, repeating the request while it answers partially_completed; delete_message
 * events keep every client's unread counts and starred messages right; protected history
 * limits the deletion to what the administrator received.
 */
import t from 'tap';
import { startSystem, type Account } from '../harness.js';
import { verifyAction } from './events-verify.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

// Two messages per batch and no time at all: each request stops after one batch.
process.env.ZC_DELETE_TOPIC_BATCH_SIZE = '2';
process.env.ZC_DELETE_TOPIC_TIME_LIMIT_MS = '0';

t.test('messages: delete a topic', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona } = sys.people;
  const denmark = await w.createStream('Denmark', [hamlet.user_id, othello.user_id, iago.user_id, desdemona.user_id]);

  const send = async (who: Account, to: string, topic: string, content: string) => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to, topic, content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const deleteTopic = (who: Account, streamId: number | string, topic: string) => sys.client(who).post(`/streams/${streamId}/delete_topic`, { topic_name: topic });
  const topicIds = async (who: Account, stream: string, topic: string) => {
    const r = await sys.client(who).get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'stream', operand: stream }, { operator: 'topic', operand: topic }] });
    return (r.body.messages as Msg[]).map((m) => m.id as number);
  };

  t.test('in batches until complete, with events that clients apply', async (t) => {
    const doomed = [
      await send(hamlet, 'Denmark', 'Doomed', 'one'),
      await send(othello, 'Denmark', 'Doomed', 'two'),
      await send(hamlet, 'Denmark', 'Doomed', 'three'),
      await send(hamlet, 'Denmark', 'doomed', 'four, another spelling'),
    ];
    const kept = await send(hamlet, 'Denmark', 'Kept', 'stays');
    await sys.client(othello).post('/messages/flags', { messages: [doomed[0]!], op: 'add', flag: 'starred' });

    const answers: Record<string, unknown>[] = [];
    const all = await verifyAction(t, sys, sys.client(othello), async () => {
      for (let i = 0; i < 5; i++) {
        const r = await deleteTopic(iago, denmark.stream_id, 'DOOMED');
        t.equal(r.status, 200);
        answers.push(r.body);
        if (r.body.result === 'success') break;
      }
    }, { params: { fetch_event_types: ['message', 'starred_messages'] }, expect: ['delete_message', 'stream/update'] });
    // The topic held Denmark's first message: its first_message_id moves on (a stream update).
    t.match(all.filter((e) => e.type === 'stream'), [{ op: 'update', stream_id: denmark.stream_id, property: 'first_message_id', value: kept }]);
    const events = all.filter((e) => e.type === 'delete_message');
    t.same(answers, [
      { result: 'partially_completed', msg: '', code: 'REQUEST_TIMEOUT', complete: false },
      { result: 'partially_completed', msg: '', code: 'REQUEST_TIMEOUT', complete: false },
      { result: 'success', msg: '', complete: true },
    ], 'two full batches, then an empty one');
    t.same(events.flatMap((e) => (e.message_ids as number[] | undefined) ?? [e.message_id as number]).sort((a, b) => a - b), doomed, 'every message, once');
    t.match(events[0], { type: 'delete_message', message_type: 'stream', stream_id: denmark.stream_id, topic: 'doomed' }, 'newest first, named as it is spelled');
    t.ok(events.some((e) => e.topic === 'Doomed'));
    t.same(await topicIds(othello, 'Denmark', 'Doomed'), []);
    t.same(await topicIds(othello, 'Denmark', 'Kept'), [kept], 'other topics stay');
    t.same((await deleteTopic(iago, denmark.stream_id, 'never existed')).body, { result: 'success', msg: '', complete: true }, 'a topic with no messages: nothing to do');
  });

  t.test('protected history: only what the administrator received', async (t) => {
    const secret = await w.createStream('Secret', [hamlet.user_id], { invite_only: true, history_public_to_subscribers: false });
    const before = await send(hamlet, 'Secret', 'plans', 'before desdemona joined');
    const sub = await sys.client(hamlet).post('/users/me/subscriptions', { subscriptions: [{ name: 'Secret' }], principals: [desdemona.user_id] });
    t.equal(sub.status, 200);
    await w.until('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [secret.stream_id, desdemona.user_id]);
    const after = await send(hamlet, 'Secret', 'plans', 'after');
    t.same((await deleteTopic(desdemona, secret.stream_id, 'plans')).body, { result: 'success', msg: '', complete: true });
    t.same(await topicIds(hamlet, 'Secret', 'plans'), [before], `${after} deleted, the message desdemona never received kept`);
  });

  t.test('errors', async (t) => {
    const id = await send(hamlet, 'Denmark', 'survivor', 'still here');
    const cases: [Account, number | string, Record<string, unknown>, string, string][] = [
      [hamlet, denmark.stream_id, { topic_name: 'survivor' }, 'UNAUTHORIZED_PRINCIPAL', 'Must be an organization administrator'],
      [iago, 999_999, { topic_name: 'survivor' }, 'BAD_REQUEST', 'Invalid channel ID'],
      [iago, w.id('Secret'), { topic_name: 'plans' }, 'BAD_REQUEST', 'Invalid channel ID'],
      [iago, denmark.stream_id, {}, 'REQUEST_VARIABLE_MISSING', "Missing 'topic_name' argument"],
      [iago, 'abc', { topic_name: 'survivor' }, 'BAD_REQUEST', 'stream_id is not an integer'],
    ];
    for (const [who, streamId, body, code, msg] of cases) {
      const r = await sys.client(who).post(`/streams/${streamId}/delete_topic`, body as never);
      t.equal(r.status, 400, `${who.email} ${streamId} ${JSON.stringify(body)}`);
      t.match(r.body, { result: 'error', code, msg }, msg);
    }
    t.same(await topicIds(hamlet, 'Denmark', 'survivor'), [id], 'nothing deleted');
  });
});

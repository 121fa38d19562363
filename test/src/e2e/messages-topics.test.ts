/**
 * GET /users/me/{stream_id}/topics (Zulip's get_topic_history_for_stream: one entry per
 * topic whatever its case, named as its newest message spells it, newest first; protected
 * history counts only what the user received) and POST /messages/render.
 */
import t, { type Test } from 'tap';
import type { Account } from '../harness.js';
import { startSystem } from '../harness.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('stream topics and preview rendering', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  const verona = (await w.createStream('Verona', [hamlet.user_id, othello.user_id])).stream_id;
  const vault = (await w.createStream('Vault', [desdemona.user_id, hamlet.user_id], { invite_only: true, history_public_to_subscribers: false })).stream_id;

  const send = async (who: Account, to: string, topic: string) => {
    const r = await sys.client(who).post('/messages', { type: 'stream', to, topic, content: `in ${topic}` });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const topics = (who: Account, streamId: number | string) => sys.client(who).get(`/users/me/${streamId}/topics`);
  const expectError = (t: Test, r: { status: number; body: Msg }, msg: string) => {
    t.equal(r.status, 400, msg);
    t.same(r.body, { result: 'error', msg, code: 'BAD_REQUEST' });
  };

  t.test('newest first, one entry per topic whatever its case', async (t) => {
    t.same((await topics(hamlet, verona)).body, { result: 'success', msg: '', topics: [] }, 'a stream without messages');
    await send(hamlet, 'Verona', 'plans');
    const war = await send(othello, 'Verona', 'war');
    await send(hamlet, 'Verona', 'Plans');
    const plans = await send(othello, 'Verona', 'PLANS');
    t.same((await topics(hamlet, verona)).body.topics, [
      { name: 'PLANS', max_id: plans },
      { name: 'war', max_id: war },
    ]);
    t.same((await topics(iago, verona)).body.topics, [
      { name: 'PLANS', max_id: plans },
      { name: 'war', max_id: war },
    ], 'a non-subscriber may read a public stream');
  });

  t.test('protected history: only the topics of messages the user received', async (t) => {
    const early = await send(desdemona, 'Vault', 'before hamlet');
    await w.unsubscribe('Vault', [hamlet.user_id]);
    await send(desdemona, 'Vault', 'while away');
    await w.subscribe('Vault', [hamlet.user_id]);
    const later = await send(desdemona, 'Vault', 'after');
    t.same((await topics(hamlet, vault)).body.topics, [
      { name: 'after', max_id: later },
      { name: 'before hamlet', max_id: early },
    ]);
    t.equal(((await topics(desdemona, vault)).body.topics as Msg[]).length, 3, 'desdemona received all three');
  });

  t.test('errors', async (t) => {
    expectError(t, await topics(othello, vault), 'Invalid channel ID');
    expectError(t, await topics(iago, vault), 'Invalid channel ID');
    expectError(t, await topics(polonius, verona), 'Invalid channel ID');
    expectError(t, await topics(hamlet, 999999), 'Invalid channel ID');
    const bad = await topics(hamlet, 'abc');
    t.equal(bad.status, 400);
    t.equal(bad.body.result, 'error');
  });

  t.test('POST /messages/render', async (t) => {
    const r = await sys.client(hamlet).post('/messages/render', { content: '**bold** and @**Othello, the Moor of Venice**' });
    t.equal(r.status, 200);
    t.match(r.body, { result: 'success', msg: '', rendered: /^<p><strong>bold<\/strong> and <span class="user-mention" data-user-id="\d+">@Othello, the Moor of Venice<\/span><\/p>$/ });
    t.same((await sys.client(hamlet).post('/messages/render', { content: '' })).body, { result: 'success', msg: '', rendered: '' });
    const missing = await sys.client(hamlet).post('/messages/render', {});
    t.equal(missing.status, 400);
    t.same(missing.body, { result: 'error', msg: "Missing 'content' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'content' });
  });
});

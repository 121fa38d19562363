/**
 * What a send reads from the read models must be current where it matters:
 *
 * - The read model of subscribers trails the subscriptions service by an event's trip. A
 *   message to a private stream goes to the subscribers the owner has now: someone whose
 *   removal the read model has not heard of yet must not get it, someone whose subscription
 *   it has not heard of yet must (the test stages the lag by editing the read model).
 * - Sends use cached read-model rows (actions/send-context.ts); a change of the read models
 *   between a send's check and its write makes the send check again, so the cache never
 *   decides who gets a message after the read model has changed.
 */
import t from 'tap';
import { createPool } from '@zc/shared/db';
import { startSystem } from '../harness.js';
import { messagesWorld } from './messages-fixtures.js';

t.test('messages: sends go by current subscribers', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const db = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => db.end());
  const { hamlet, othello, iago, desdemona } = sys.people;
  const hideout = await w.createStream('Hideout', [hamlet.user_id, othello.user_id], { invite_only: true, history_public_to_subscribers: false });
  const plaza = await w.createStream('Plaza', [hamlet.user_id, othello.user_id]);
  const send = async (to: string, content: string) => {
    const r = await sys.client(hamlet).post('/messages', { type: 'stream', to, topic: 'news', content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const receivers = async (messageId: number) =>
    (await db.query<{ user_id: number }>('SELECT user_id FROM messages.user_message WHERE message_id = $1 ORDER BY user_id', [messageId])).rows.map((r) => r.user_id);
  // Edits behind the store's back, announced as its writes announce theirs.
  const staleRead = async (sql: string, params: unknown[]) => {
    await db.query(sql, params);
    await db.query('UPDATE messages.read_model_version SET version = version + 1 WHERE realm_id = $1', [sys.realmId]);
  };
  const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

  await send('Hideout', 'warm the cache');

  t.test('a private stream: a removal the read model has not heard of yet', async (t) => {
    await staleRead('INSERT INTO messages.subscriber (stream_id, user_id) VALUES ($1, $2)', [hideout.stream_id, iago.user_id]);
    const id = await send('Hideout', 'not for iago');
    t.same(await receivers(id), sorted([hamlet.user_id, othello.user_id]), 'only the subscribers the owner has');
    const { rowCount } = await db.query('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [hideout.stream_id, iago.user_id]);
    t.equal(rowCount, 0, 'the read model was corrected');
    const r = await sys.client(iago).get(`/messages/${id}`);
    t.equal(r.status, 400, 'iago cannot read it');
  });

  t.test('a private stream: a subscription the read model has not heard of yet', async (t) => {
    await staleRead('DELETE FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [hideout.stream_id, othello.user_id]);
    const id = await send('Hideout', 'for othello too');
    t.same(await receivers(id), sorted([hamlet.user_id, othello.user_id]));
  });

  t.test('a cached send context is not used once the read model changed', async (t) => {
    await send('Plaza', 'cache Plaza');
    // The subscriptions service's own event (as if desdemona just subscribed).
    await w.subscribe('Plaza', [desdemona.user_id]);
    const id = await send('Plaza', 'for desdemona too');
    t.same(await receivers(id), sorted([hamlet.user_id, othello.user_id, desdemona.user_id]));
    await w.unsubscribe('Plaza', [othello.user_id]);
    const id2 = await send('Plaza', 'not for othello');
    t.same(await receivers(id2), sorted([hamlet.user_id, desdemona.user_id]));
    void plaza;
  });
});

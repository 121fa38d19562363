/**
 * A realm setting changed by PATCH /realm holds from the very next request, in every service
 * that decides by it, although those services read their own copy of the realm, fed by the
 * users service's events a moment later (docs/CONVENTIONS.md, read models). The request
 * carries the realm revision it was authenticated at, and a copy older than that is fetched
 * again. Each setting is flipped back and forth several times, each flip tested at once; on
 * an idle machine the event usually wins that race, so the last test makes a copy lag on
 * purpose (puts back what it held before the change, once the event has been applied).
 */
import t from 'tap';
import { createPool } from '@zc/shared/db';
import type { Params } from '../client.js';
import { startSystem } from '../harness.js';

const FLIPS = 4;
const ADMINS_ONLY = 2;
const MEMBERS = 1;

t.test('realm policies hold from the next request on', async (t) => {
  const sys = await startSystem(t);
  const { iago, hamlet, othello } = sys.people;
  const owner = sys.client(iago);
  const member = sys.client(hamlet);
  const setRealm = async (settings: Params) => {
    const r = await owner.patch('/realm', settings);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };
  t.equal((await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'Freshness' }] })).status, 200);
  const sent = await member.post('/messages', { type: 'stream', to: 'Freshness', topic: 'flips', content: 'first words' });
  const messageId = sent.body.id as number;

  await t.test('allow_message_editing (messages service)', async (t) => {
    for (let i = 0; i < FLIPS; i++) {
      await setRealm({ allow_message_editing: false });
      t.match(await member.patch(`/messages/${messageId}`, { content: `edit ${i} refused` }), { status: 400, body: { result: 'error', msg: 'Your organization has turned off message editing' } }, `flip ${i}: refused`);
      await setRealm({ allow_message_editing: true });
      t.match(await member.patch(`/messages/${messageId}`, { content: `edit ${i}` }), { status: 200, body: { result: 'success' } }, `flip ${i}: allowed again`);
    }
  });

  await t.test('allow_edit_history (messages service)', async (t) => {
    for (let i = 0; i < FLIPS; i++) {
      await setRealm({ allow_edit_history: false });
      t.match(await member.get(`/messages/${messageId}/history`), { status: 400, body: { msg: 'Message edit history is disabled in this organization' } }, `flip ${i}: hidden`);
      await setRealm({ allow_edit_history: true });
      t.match(await member.get(`/messages/${messageId}/history`), { status: 200, body: { result: 'success' } }, `flip ${i}: shown`);
    }
  });

  await t.test('create_public_stream_policy (subscriptions service)', async (t) => {
    for (let i = 0; i < FLIPS; i++) {
      await setRealm({ create_public_stream_policy: ADMINS_ONLY });
      t.match(await member.post('/users/me/subscriptions', { subscriptions: [{ name: `Refused ${i}` }] }), { status: 400, body: { msg: 'Insufficient permission' } }, `flip ${i}: refused`);
      await setRealm({ create_public_stream_policy: MEMBERS });
      t.match(await member.post('/users/me/subscriptions', { subscriptions: [{ name: `Made ${i}` }] }), { status: 200 }, `flip ${i}: allowed again`);
    }
  });

  await t.test('invite_to_stream_policy (subscriptions service)', async (t) => {
    for (let i = 0; i < FLIPS; i++) {
      await setRealm({ invite_to_stream_policy: ADMINS_ONLY });
      t.match(await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'Freshness' }], principals: [othello.user_id] }), { status: 400, body: { msg: 'Insufficient permission' } }, `flip ${i}: refused`);
      await setRealm({ invite_to_stream_policy: MEMBERS });
      t.match(await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'Freshness' }], principals: [othello.user_id] }), { status: 200 }, `flip ${i}: allowed again`);
      t.equal((await sys.client(othello).delete('/users/me/subscriptions', { subscriptions: ['Freshness'] })).status, 200);
    }
  });

  await t.test('a copy held back from before the change is not trusted', async (t) => {
    const db = createPool(sys.env.databaseUrl, { max: 1 });
    t.teardown(() => db.end());
    const copy = async (schema: string) =>
      (await db.query<{ settings: Record<string, unknown>; revision: number }>(`SELECT settings, revision FROM ${schema}.realm WHERE id = $1`, [sys.realmId])).rows[0];
    /** Changes the realm, waits for the event to reach each copy, then gives the copy its old contents back. */
    const changeWithLaggingCopies = async (settings: Params, schemas: string[]) => {
      const before = await Promise.all(schemas.map(copy));
      await setRealm(settings);
      for (const [i, schema] of schemas.entries()) {
        for (let n = 0; n < 100 && (await copy(schema))?.revision === before[i]?.revision; n++) await new Promise((r) => setTimeout(r, 20));
        t.not((await copy(schema))?.revision, before[i]?.revision, `${schema} has the change`);
        await db.query(`UPDATE ${schema}.realm SET settings = $2, revision = $3 WHERE id = $1`, [sys.realmId, JSON.stringify(before[i]?.settings), before[i]?.revision]);
      }
    };
    await changeWithLaggingCopies({ allow_message_editing: false, create_public_stream_policy: ADMINS_ONLY }, ['messages', 'subscriptions']);
    t.match(await member.patch(`/messages/${messageId}`, { content: 'edit refused' }), { status: 400, body: { msg: 'Your organization has turned off message editing' } }, 'edit refused');
    t.match(await member.post('/users/me/subscriptions', { subscriptions: [{ name: 'Refused again' }] }), { status: 400, body: { msg: 'Insufficient permission' } }, 'stream creation refused');
    t.equal((await copy('messages'))?.revision, (await copy('subscriptions'))?.revision, 'both copies fetched again');
    await setRealm({ allow_message_editing: true, create_public_stream_policy: MEMBERS });
  });

  await t.test('delete_own_message_policy (messages service)', async (t) => {
    for (let i = 0; i < FLIPS; i++) {
      const mine = (await member.post('/messages', { type: 'stream', to: 'Freshness', topic: 'flips', content: `to delete ${i}` })).body.id as number;
      await setRealm({ delete_own_message_policy: ADMINS_ONLY });
      t.match(await member.delete(`/messages/${mine}`), { status: 400, body: { msg: "You don't have permission to delete this message" } }, `flip ${i}: refused`);
      await setRealm({ delete_own_message_policy: MEMBERS });
      t.match(await member.delete(`/messages/${mine}`), { status: 200 }, `flip ${i}: allowed again`);
    }
  });
});

/**
 * The drafts actions and their bus handlers against real PostgreSQL and NATS. The users and
 * subscriptions services are stood in for by small responders on this test's subject prefix
 * (real NATS, answers from a fixed table), so the drafts service is tested alone.
 */
import t from 'tap';
import { Bus } from '@zc/shared/bus';
import { Role, drafts as draftsRpc, subscriptionsRpc, users, type Actor, type ClientNotify, type StreamRecord } from '@zc/shared/contracts';
import { createPool, runMigrations } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { testEnv } from '@zc/shared/testing';
import { doCreateDrafts, doDeleteDraft, doEditDraft } from '../../src/actions/drafts.js';
import { makeDeps } from '../../src/deps.js';
import { registerDraftHandlers } from '../../src/handlers/drafts.js';
import { getRegisterState, listDrafts } from '../../src/queries/drafts.js';
import { MIGRATIONS_DIR } from '../../src/service.js';

const REALM = 7;
const actor = (user_id: number, role: number = Role.MEMBER): Actor => ({ realm_id: REALM, user_id, role, email: `u${user_id}@x.test`, full_name: `U${user_id}`, is_bot: false });
const hamlet = actor(10);
const guest = actor(12, Role.GUEST);

const stream = (stream_id: number, invite_only: boolean): StreamRecord => ({
  stream_id,
  realm_id: REALM,
  name: `s${stream_id}`,
  description: '',
  rendered_description: '',
  invite_only,
  is_web_public: false,
  history_public_to_subscribers: true,
  stream_post_policy: 1,
  message_retention_days: null,
  date_created: 0,
  creator_id: null,
  can_remove_subscribers_group_id: 1,
  is_archived: false,
});
// Stream 1 public, 2 private with hamlet subscribed, 3 private without him.
const STREAMS = new Map([
  [1, { stream: stream(1, false), subscribers: [] as number[] }],
  [2, { stream: stream(2, true), subscribers: [10] }],
  [3, { stream: stream(3, true), subscribers: [] }],
]);
const USERS = new Set([10, 11, 12]);

const errorOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    const a = e as { code: string | null; message: string; httpStatus: number };
    return { code: a.code, msg: a.message, status: a.httpStatus };
  }
  return undefined;
};

t.test('drafts actions', async (t) => {
  const env = await testEnv(t);
  const pool = createPool(env.databaseUrl, { max: 4 });
  await runMigrations(pool, 'drafts', MIGRATIONS_DIR);
  const log = createLogger({ service: 'drafts-test', level: 'silent' });
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'drafts-test', log });
  t.teardown(async () => {
    await bus.close();
    await pool.end();
  });
  // The users service's answer about the sync setting: on unless a test switches it.
  const syncOff = new Map<number, string | null>();
  const clearedAt = new Map<number, string>();
  bus.serve(users.userSettings, async (r) => ({
    users: r.user_ids.map((user_id) => ({
      user_id,
      settings: { enable_drafts_synchronization: !syncOff.has(user_id) } as never,
      drafts_cleared_at: clearedAt.get(user_id) ?? null,
    })),
  }));
  bus.serve(users.resolve, async (r) => ({ users: [], missing_ids: r.user_ids.filter((id) => !USERS.has(id)), missing_emails: [] }));
  bus.serve(subscriptionsRpc.streamAccess, async (r) => {
    const s = 'stream_id' in r.stream ? STREAMS.get(r.stream.stream_id) : undefined;
    return { stream: s?.stream ?? null, subscribed: s?.subscribers.includes(r.user_id) ?? false, subscriber_ids: s?.subscribers ?? [] };
  });
  let clock = 1_700_000_000;
  const deps = makeDeps({ pool, bus, log, now: () => clock });
  const outbox = async () => (await pool.query<{ subject: string; payload: ClientNotify }>('SELECT subject, payload FROM drafts.outbox ORDER BY id')).rows;
  const count = async () => Number((await pool.query('SELECT count(*) AS n FROM drafts.draft')).rows[0].n);

  t.test('doCreateDrafts stores the drafts in order and notifies only their owner', async (t) => {
    const ids = await doCreateDrafts(deps, hamlet, [
      { type: 'stream', to: [1], topic: 'one', content: 'first' },
      { type: 'private', to: [11, 10], topic: 'x', content: 'second', timestamp: 1595479019 },
      { type: '', to: [], topic: '', content: 'third' },
    ]);
    t.equal(ids.length, 3);
    t.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, 'ids in the order given');
    const rows = await outbox();
    t.equal(rows.length, 1);
    t.equal(rows[0]?.subject, 'events.inbox.v1.notify');
    t.same(rows[0]?.payload, {
      realm_id: REALM,
      users: [10],
      event: {
        type: 'drafts',
        op: 'add',
        drafts: [
          { id: ids[0], type: 'stream', to: [1], topic: 'one', content: 'first', timestamp: clock },
          { id: ids[1], type: 'private', to: [11], topic: '', content: 'second', timestamp: 1595479019 },
          { id: ids[2], type: '', to: [], topic: '', content: 'third', timestamp: clock },
        ],
      },
    });
    t.same((await listDrafts(deps, hamlet)).map((d) => d.id), [ids[2], ids[0], ids[1]], 'most recently edited first (ties: newest id first)');
    t.same(await listDrafts(deps, actor(11)), [], 'nobody else sees them');
  });

  t.test('recipients must exist and be accessible; a failed create changes nothing', async (t) => {
    await pool.query('DELETE FROM drafts.outbox');
    const before = await count();
    const cases: Array<[Actor, Record<string, unknown>, string]> = [
      [hamlet, { type: 'stream', to: [99], topic: 't', content: 'c' }, 'Invalid channel ID'],
      [hamlet, { type: 'stream', to: [3], topic: 't', content: 'c' }, 'Invalid channel ID'],
      [guest, { type: 'stream', to: [1], topic: 't', content: 'c' }, 'Invalid channel ID'],
      [hamlet, { type: 'private', to: [11, 98, 97], topic: '', content: 'c' }, 'Invalid user ID 97'],
    ];
    for (const [who, d, msg] of cases) {
      t.same(await errorOf(doCreateDrafts(deps, who, [{ type: '', to: [], topic: '', content: 'fine' }, d as never])), { code: 'BAD_REQUEST', msg, status: 400 }, msg);
    }
    t.same(await errorOf(doCreateDrafts(deps, hamlet, [{ type: 'stream', to: [], topic: 't', content: 'c' }])), { code: 'BAD_REQUEST', msg: 'Must specify exactly 1 channel ID for channel messages', status: 400 });
    await doCreateDrafts(deps, hamlet, [{ type: 'stream', to: [2], topic: 't', content: 'to a private stream he is in' }]);
    t.equal(await count(), before + 1, 'only the valid create stored anything');
    t.equal((await outbox()).length, 1);
  });

  t.test('doEditDraft replaces the draft; an unknown or foreign one does not exist', async (t) => {
    await pool.query('DELETE FROM drafts.outbox');
    const [id] = await doCreateDrafts(deps, hamlet, [{ type: '', to: [], topic: '', content: 'v1' }]);
    clock += 60;
    await doEditDraft(deps, hamlet, id!, { type: 'stream', to: [1], topic: 'now addressed', content: 'v2' });
    const edited = (await listDrafts(deps, hamlet)).find((d) => d.id === id);
    t.same(edited, { id, type: 'stream', to: [1], topic: 'now addressed', content: 'v2', timestamp: clock });
    t.same((await outbox()).at(-1)?.payload.event, { type: 'drafts', op: 'update', draft: edited });
    const missing = { code: null, msg: 'Draft does not exist', status: 404 };
    t.same(await errorOf(doEditDraft(deps, hamlet, 123456, { type: '', to: [], topic: '', content: 'x' })), missing);
    t.same(await errorOf(doEditDraft(deps, actor(11), id!, { type: '', to: [], topic: '', content: 'x' })), missing, "another user's draft");
    t.same(await errorOf(doEditDraft(deps, hamlet, 123456, { type: 'stream', to: [], topic: '', content: 'x' })), missing, 'existence is checked first');
    t.same(await errorOf(doEditDraft(deps, hamlet, id!, { type: '', to: [], topic: '', content: 'x', timestamp: -5 })), { code: 'BAD_REQUEST', msg: 'Timestamp must not be negative.', status: 400 });
  });

  t.test('doDeleteDraft removes it once', async (t) => {
    await pool.query('DELETE FROM drafts.outbox');
    const [id] = await doCreateDrafts(deps, hamlet, [{ type: '', to: [], topic: '', content: 'bye' }]);
    t.same(await errorOf(doDeleteDraft(deps, actor(11), id!)), { code: null, msg: 'Draft does not exist', status: 404 });
    await doDeleteDraft(deps, hamlet, id!);
    t.same((await outbox()).at(-1)?.payload.event, { type: 'drafts', op: 'remove', draft_id: id });
    t.same(await errorOf(doDeleteDraft(deps, hamlet, id!)), { code: null, msg: 'Draft does not exist', status: 404 });
    t.notOk((await listDrafts(deps, hamlet)).some((d) => d.id === id));
  });

  t.test('register state: the drafts and the snapshot they were read in', async (t) => {
    const { snapshot, state } = await getRegisterState(deps, hamlet, ['drafts']);
    t.match(snapshot, /^\d+:\d+:[\d,]*$/);
    t.same(state.drafts, await listDrafts(deps, hamlet));
    t.same((await getRegisterState(deps, hamlet, ['realm'])).state, {}, 'nothing unless drafts is fetched');
  });

  t.test('enable_drafts_synchronization off: every call refused, register empty, drafts stored before the switch deleted', async (t) => {
    const me = actor(20);
    const [early] = await doCreateDrafts(deps, me, [{ type: '', to: [], topic: '', content: 'before the switch' }]);
    const at = ((await pool.query<{ at: string }>('SELECT now()::text AS at')).rows[0] as { at: string }).at;
    syncOff.set(me.user_id, at);
    clearedAt.set(me.user_id, at);
    const refused = { code: 'BAD_REQUEST', msg: 'User has disabled synchronizing drafts.', status: 400 };
    t.same(await errorOf(listDrafts(deps, me)), refused, 'GET /drafts');
    t.same(await errorOf(doCreateDrafts(deps, me, [{ type: '', to: [], topic: '', content: 'x' }])), refused, 'POST /drafts');
    t.same(await errorOf(doEditDraft(deps, me, 999_999, { type: '', to: [], topic: '', content: 'x' })), refused, 'PATCH: checked before the draft is looked up');
    t.same(await errorOf(doDeleteDraft(deps, me, early!)), refused, 'DELETE');
    t.same((await getRegisterState(deps, me, ['drafts'])).state, { drafts: [] }, '/register: no drafts');
    t.equal(Number((await pool.query('SELECT count(*) AS n FROM drafts.draft WHERE user_id = $1', [me.user_id])).rows[0].n), 0, 'the drafts stored before the switch are gone');
    syncOff.delete(me.user_id);
    const [late] = await doCreateDrafts(deps, me, [{ type: '', to: [], topic: '', content: 'after switching back on' }]);
    t.same((await listDrafts(deps, me)).map((d) => d.id), [late], 'a draft stored after switching back on stays');
    t.same((await getRegisterState(deps, me, ['drafts'])).state.drafts, await listDrafts(deps, me));
  });

  t.test('handlers over NATS, including error replies and a malformed request', async (t) => {
    registerDraftHandlers(bus, deps);
    await bus.nc.flush();
    const created = await bus.request(draftsRpc.create, { actor: hamlet, drafts: [{ type: '', to: [], topic: '', content: 'via bus' }] });
    t.equal(created.ids.length, 1);
    const listed = await bus.request(draftsRpc.list, { actor: hamlet });
    t.equal(listed.count, listed.drafts.length);
    t.equal(listed.drafts[0]?.content, 'via bus');
    const missing = await errorOf(bus.request(draftsRpc.remove, { actor: hamlet, draft_id: 999_999 }));
    t.same(missing, { code: null, msg: 'Draft does not exist', status: 404 });
    const malformed = await errorOf(bus.request(draftsRpc.edit, { actor: hamlet, draft_id: 'x' } as never));
    t.same(malformed, { code: 'BAD_REQUEST', msg: 'Malformed internal request', status: 400 });
  });
});

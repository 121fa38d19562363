/**
 * The drafts endpoints end to end (spec 2.7, 4.10, 4.11; api-notes §2.4): success shapes,
 * every documented error with its status, code and msg, that a failed request changes
 * nothing, and the drafts events the owner's other clients receive.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';

t.test('drafts', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, polonius } = sys.people;
  const h = sys.client(hamlet);
  const list = async () => (await h.get('/drafts')).body as unknown as { count: number; drafts: Array<Record<string, unknown>> };

  const sub = await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Verona' }] });
  t.equal(sub.status, 200, 'a stream to address drafts to');
  const idReply = await h.get('/get_stream_id', { stream: 'Verona' });
  const verona = idReply.body.stream_id as number;
  t.type(verona, 'number');
  const priv = await h.post('/users/me/subscriptions', { subscriptions: [{ name: 'Hamlet only' }], invite_only: true });
  t.equal(priv.status, 200);
  const secret = (await h.get('/get_stream_id', { stream: 'Hamlet only' })).body.stream_id as number;

  t.test('GET /drafts with none', async (t) => {
    t.same((await h.get('/drafts')).body, { result: 'success', msg: '', count: 0, drafts: [] });
  });

  t.test('POST /drafts creates them in order; other clients hear of it', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const r = await h.post('/drafts', {
      drafts: [
        { type: 'stream', to: [verona], topic: 'sync drafts', content: "Let's add backend support for syncing drafts.", timestamp: 1595479019 },
        { type: 'private', to: [othello.user_id], topic: '', content: 'What if we synced drafts?', timestamp: 1595479020 },
        { type: '', to: [], topic: '', content: 'unaddressed' },
      ],
    });
    t.equal(r.status, 200);
    const ids = r.body.ids as number[];
    t.equal(ids.length, 3);
    t.same(Object.keys(r.body).sort(), ['ids', 'msg', 'result']);
    const got = await list();
    t.equal(got.count, 3);
    t.same(got.drafts.map((d) => d.id), [ids[2], ids[1], ids[0]], 'most recently edited first');
    t.same(got.drafts[2], { id: ids[0], type: 'stream', to: [verona], topic: 'sync drafts', content: "Let's add backend support for syncing drafts.", timestamp: 1595479019 });
    t.ok(Math.abs((got.drafts[0]?.timestamp as number) - Date.now() / 1000) < 10, 'a missing timestamp is filled with now');
    const [event] = await poller.collect(1);
    t.same(event, { id: event?.id, type: 'drafts', op: 'add', drafts: [...got.drafts].reverse() });
    // Clean slate for the next tests.
    for (const id of ids) await h.delete(`/drafts/${id}`);
  });

  t.test('POST /drafts errors change nothing', async (t) => {
    const cases: Array<[string, unknown, number, Record<string, unknown>]> = [
      ['no stream id', [{ type: 'stream', to: [], topic: 't', content: 'c' }], 400, { code: 'BAD_REQUEST', msg: 'Must specify exactly 1 channel ID for channel messages' }],
      ['two stream ids', [{ type: 'stream', to: [verona, verona], topic: 't', content: 'c' }], 400, { code: 'BAD_REQUEST', msg: 'Must specify exactly 1 channel ID for channel messages' }],
      ['NUL in the topic', [{ type: 'stream', to: [verona], topic: 'a\u0000', content: 'c' }], 400, { code: 'BAD_REQUEST', msg: 'drafts must not contain null bytes' }],
      ['NUL in the content', [{ type: '', to: [], topic: '', content: 'a\u0000' }], 400, { code: 'BAD_REQUEST', msg: 'drafts must not contain null bytes' }],
      ['negative timestamp', [{ type: '', to: [], topic: '', content: 'c', timestamp: -1 }], 400, { code: 'BAD_REQUEST', msg: 'Timestamp must not be negative.' }],
      ['unknown stream', [{ type: 'stream', to: [99999], topic: 't', content: 'c' }], 400, { code: 'BAD_REQUEST', msg: 'Invalid channel ID' }],
      ['unknown user', [{ type: 'private', to: [99999], topic: '', content: 'c' }], 400, { code: 'BAD_REQUEST', msg: 'Invalid user ID 99999' }],
      ['bad type', [{ type: 'huddle', to: [], topic: '', content: 'c' }], 400, { code: 'BAD_REQUEST' }],
      ['not JSON', 'drafts!', 400, { code: 'BAD_REQUEST', msg: 'Argument "drafts" is not valid JSON.' }],
    ];
    for (const [name, drafts, status, body] of cases) {
      const r = await h.post('/drafts', { drafts: drafts as never });
      t.equal(r.status, status, name);
      t.match(r.body, { result: 'error', ...body }, name);
    }
    const guest = await sys.client(polonius).post('/drafts', { drafts: [{ type: 'stream', to: [secret], topic: 't', content: 'c' }] });
    t.match(guest.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid channel ID' }, "a private stream one is not subscribed to");
    t.equal((await list()).count, 0, 'nothing was stored');
    const empty = await h.post('/drafts', {});
    t.same(empty.body, { result: 'success', msg: '', ids: [] }, 'drafts is optional');
  });

  t.test('a stream topic is cut to 60 characters; direct drafts list the other users', async (t) => {
    const r = await h.post('/drafts', {
      drafts: [
        { type: 'stream', to: [verona], topic: 't'.repeat(80), content: 'long topic' },
        { type: 'private', to: [othello.user_id, hamlet.user_id, polonius.user_id], topic: 'ignored', content: 'group' },
      ],
    });
    const [stream, direct] = r.body.ids as number[];
    const drafts = (await list()).drafts;
    t.equal(drafts.find((d) => d.id === stream)?.topic, `${'t'.repeat(57)}...`);
    t.match(drafts.find((d) => d.id === direct), { type: 'private', to: [othello.user_id, polonius.user_id].sort((a, b) => a - b), topic: '' });
    for (const id of [stream, direct]) await h.delete(`/drafts/${id}`);
  });

  t.test('PATCH /drafts/{id} replaces the draft', async (t) => {
    const [id] = (await h.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'first', timestamp: 1000 }] })).body.ids as number[];
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const r = await h.patch(`/drafts/${id}`, { draft: { type: 'stream', to: [verona], topic: 'now', content: 'second', timestamp: 2000 } });
    t.same(r.body, { result: 'success', msg: '' });
    const expected = { id, type: 'stream', to: [verona], topic: 'now', content: 'second', timestamp: 2000 };
    t.same((await list()).drafts, [expected]);
    const [event] = await poller.collect(1);
    t.same(event, { id: event?.id, type: 'drafts', op: 'update', draft: expected });

    const missing = await h.patch('/drafts/999999', { draft: { type: '', to: [], topic: '', content: 'x' } });
    t.equal(missing.status, 404);
    t.same(missing.body, { result: 'error', msg: 'Draft does not exist' }, 'no code (spec section 7)');
    const foreign = await sys.client(othello).patch(`/drafts/${id}`, { draft: { type: '', to: [], topic: '', content: 'x' } });
    t.equal(foreign.status, 404, "another user's draft does not exist for them");
    const noDraft = await h.patch(`/drafts/${id}`, {});
    t.same(noDraft.body, { result: 'error', msg: "Missing 'draft' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'draft' });
    const invalid = await h.patch(`/drafts/${id}`, { draft: { type: 'stream', to: [], topic: 't', content: 'c' } });
    t.match(invalid.body, { code: 'BAD_REQUEST', msg: 'Must specify exactly 1 channel ID for channel messages' });
    const badId = await h.patch('/drafts/abc', { draft: { type: '', to: [], topic: '', content: 'x' } });
    t.equal(badId.status, 400);
    t.same((await list()).drafts, [expected], 'failed edits changed nothing');
    await h.delete(`/drafts/${id}`);
  });

  t.test('DELETE /drafts/{id}', async (t) => {
    const [id] = (await h.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'doomed' }] })).body.ids as number[];
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const foreign = await sys.client(othello).delete(`/drafts/${id}`);
    t.equal(foreign.status, 404);
    t.same(foreign.body, { result: 'error', msg: 'Draft does not exist' });
    t.same((await h.delete(`/drafts/${id}`)).body, { result: 'success', msg: '' });
    const [event] = await poller.collect(1);
    t.same(event, { id: event?.id, type: 'drafts', op: 'remove', draft_id: id });
    const again = await h.delete(`/drafts/${id}`);
    t.equal(again.status, 404);
    t.same(again.body, { result: 'error', msg: 'Draft does not exist' });
    t.equal((await list()).count, 0);
  });

  t.test('register carries the drafts, newest first', async (t) => {
    await h.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'older', timestamp: 10 }, { type: '', to: [], topic: '', content: 'newer', timestamp: 20 }] });
    const r = await h.post('/register', { fetch_event_types: ['drafts'] });
    t.same((r.body.drafts as Array<{ content: string }>).map((d) => d.content), ['newer', 'older']);
  });

  t.test('enable_drafts_synchronization off: refused, deleted without drafts events, register empty; on again: synced afresh', async (t) => {
    const o = sys.client(othello);
    const kept = (await o.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'before' }] })).body.ids as number[];
    t.equal(kept.length, 1);
    const { poller } = await QueuePoller.register(o, { event_types: ['drafts', 'user_settings'] });
    t.same((await o.patch('/settings', { enable_drafts_synchronization: false })).body, { result: 'success', msg: '' });
    const refused = { result: 'error', msg: 'User has disabled synchronizing drafts.', code: 'BAD_REQUEST' };
    // Straight after the answer, and on every drafts endpoint (Zulip's draft_endpoint).
    for (const [what, r] of [
      ['GET', await o.get('/drafts')],
      ['POST', await o.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'x' }] })],
      ['PATCH', await o.patch(`/drafts/${kept[0]}`, { draft: { type: '', to: [], topic: '', content: 'x' } })],
      ['DELETE', await o.delete(`/drafts/${kept[0]}`)],
      ['PATCH unknown', await o.patch('/drafts/999999', { draft: { type: '', to: [], topic: '', content: 'x' } })],
    ] as const) {
      t.equal(r.status, 400, what);
      t.same(r.body, refused, what);
    }
    t.same((await o.post('/register', { fetch_event_types: ['drafts'] })).body.drafts, [], '/register: no drafts');
    const events = await poller.collect(1);
    t.same(events.map((e) => [e.type, e.property, e.value]), [['user_settings', 'enable_drafts_synchronization', false]], 'no drafts event');
    // Back on at once: the drafts stored before the switch are gone even if the drafts
    // service has not heard the settings event yet; new ones are kept.
    t.equal((await o.patch('/settings', { enable_drafts_synchronization: true })).status, 200);
    t.same((await o.get('/drafts')).body, { result: 'success', msg: '', count: 0, drafts: [] }, 'the old draft was deleted');
    const fresh = (await o.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'after' }] })).body.ids as number[];
    await sys.flushOutboxes();
    await new Promise((r) => setTimeout(r, 300));
    t.same(((await o.get('/drafts')).body.drafts as Array<{ id: number }>).map((d) => d.id), fresh, 'the late settings event deletes nothing stored since');
    await o.delete(`/drafts/${fresh[0]}`);
  });
});

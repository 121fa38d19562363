/**
 * POST /register, GET /events and DELETE /events end to end (spec section 6 and 4.21,
 * api-notes §2.1–2.2 and §3): the register reply, event delivery and filtering, the
 * long-poll (parking, heartbeat, supplanting), acknowledgement errors, queue limits and
 * expiry, and BAD_EVENT_QUEUE_ID for every lost-queue situation.
 */
import t from 'tap';
import { versionFields } from '@zc/shared/contracts';
import { Redis } from '@zc/shared/redis';
import { startSystem } from '../harness.js';
import { QueuePoller, register } from './events-support.js';

// Short enough for tests; production uses 45–55 s.
process.env.ZC_HEARTBEAT_MS = '1500';
process.env.ZC_MAX_QUEUES_PER_USER = '20';
process.env.ZC_MAX_EVENTS_PER_QUEUE = '30';

const streamDraft = (content: string) => ({ type: '', to: [], topic: '', content });

t.test('event queues', async (t) => {
  const sys = await startSystem(t);
  const { hamlet, othello, iago } = sys.people;
  const h = sys.client(hamlet);

  t.test('register answers the version keys, the queue and the limits clients need', async (t) => {
    const s = await register(h);
    t.match(s, { result: 'success', msg: '', ...versionFields(), max_message_length: 10000, max_topic_length: 60, event_queue_longpoll_timeout_seconds: 90 });
    t.match(s.queue_id, /^[0-9a-f-]{36}$/);
    t.equal(s.last_event_id, -1, 'nothing arrived while the state was read');
    for (const key of ['alert_words', 'muted_users', 'presences', 'realm_emoji', 'realm_user_groups', 'recent_private_conversations', 'user_status', 'drafts', 'realm_users', 'realm_non_active_users', 'cross_realm_bots', 'user_settings', 'unread_msgs', 'starred_messages', 'subscriptions', 'streams', 'user_topics', 'custom_profile_fields', 'realm_name', 'max_message_id']) {
      t.ok(key in s, `has ${key}`);
    }
    t.match(s.unread_msgs, { count: Number, pms: Array, streams: Array, huddles: Array, mentions: Array, old_unreads_missing: Boolean });
    t.equal(s.user_id, hamlet.user_id);
  });

  t.test('fetch_event_types limits the state; unknown types are ignored', async (t) => {
    const s = await register(h, { event_types: ['drafts'], fetch_event_types: ['drafts', 'no_such_type'] });
    t.same(s.drafts, []);
    t.notOk('realm_users' in s);
    t.notOk('subscriptions' in s);
    const onlyEvents = await register(h, { event_types: ['realm_user'] });
    t.ok('realm_users' in onlyEvents, 'fetch_event_types defaults to event_types');
    t.notOk('drafts' in onlyEvents);
  });

  t.test('register rejects a narrow operator events cannot be filtered by, and bad parameters', async (t) => {
    const r = await h.post('/register', { narrow: [['search', 'x']] });
    t.equal(r.status, 400);
    t.same(r.body, { result: 'error', msg: 'Operator search not supported.', code: 'BAD_REQUEST' });
    const bad = await h.post('/register', { event_types: 'message' });
    t.equal(bad.status, 400);
    t.match(bad.body, { result: 'error', code: 'BAD_REQUEST', var_name: 'event_types' });
  });

  t.test('a drafts event reaches every queue of the user, and only theirs', async (t) => {
    const a = await QueuePoller.register(h, { event_types: ['drafts'] });
    const b = await QueuePoller.register(h);
    const other = await QueuePoller.register(sys.client(othello), { event_types: ['drafts'] });
    const created = await h.post('/drafts', { drafts: [streamDraft('hello')] });
    t.equal(created.status, 200);
    const [ea] = await a.poller.collect(1);
    const [eb] = await b.poller.collect(1);
    t.match(ea, { type: 'drafts', op: 'add', drafts: [{ id: (created.body.ids as number[])[0], content: 'hello', type: '' }] });
    t.same(ea, { ...eb, id: ea?.id });
    t.same(await other.poller.drain(), [], "othello's queue gets nothing");
  });

  t.test('event_types filters; heartbeats bypass it', async (t) => {
    const q = await QueuePoller.register(h, { event_types: ['realm_user'] });
    await h.post('/drafts', { drafts: [streamDraft('filtered out')] });
    const started = Date.now();
    const events = await q.poller.poll();
    t.match(events, [{ type: 'heartbeat', id: Number }], 'the parked poll ends with a heartbeat only');
    t.ok(Date.now() - started >= 1000, 'after the heartbeat delay');
  });

  t.test('a parked poll returns queue_id; an immediate one does not', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const parked = h.get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
    await new Promise((r) => setTimeout(r, 200));
    await h.post('/drafts', { drafts: [streamDraft('wake up')] });
    const r = await parked;
    t.match(r.body, { result: 'success', queue_id: poller.queueId, events: [{ type: 'drafts', op: 'add' }] });
    const again = await h.get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
    t.notOk('queue_id' in again.body, 'events were waiting: immediate reply');
    t.equal((again.body.events as unknown[]).length, 1, 'unacknowledged events are delivered again');
  });

  t.test('a newer poll on the same queue ends the older one with no events', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const older = h.get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
    await new Promise((r) => setTimeout(r, 200));
    const newer = h.get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
    const o = await older;
    t.same(o.body, { result: 'success', msg: '', events: [], queue_id: poller.queueId });
    await h.post('/drafts', { drafts: [streamDraft('for the newer poll')] });
    t.match((await newer).body, { events: [{ type: 'drafts' }] });
  });

  t.test('dont_block answers at once', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const r = await h.get('/events', { queue_id: poller.queueId, last_event_id: -1, dont_block: true });
    t.same(r.body, { result: 'success', msg: '', events: [] });
  });

  t.test('acknowledging: ids only grow; pruned and unknown ids are errors', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    await h.post('/drafts', { drafts: [streamDraft('one')] });
    await h.post('/drafts', { drafts: [streamDraft('two')] });
    const events = await poller.collect(2);
    t.same(events.map((e) => e.id), [0, 1]);
    const ack = await h.get('/events', { queue_id: poller.queueId, last_event_id: 1, dont_block: true });
    t.same(ack.body.events, []);
    const pruned = await h.get('/events', { queue_id: poller.queueId, last_event_id: 0, dont_block: true });
    t.equal(pruned.status, 400);
    t.same(pruned.body, { result: 'error', msg: 'An event newer than 1 has already been pruned!', code: 'BAD_REQUEST' });
    const unknown = await h.get('/events', { queue_id: poller.queueId, last_event_id: 7, dont_block: true });
    t.equal(unknown.status, 400);
    t.same(unknown.body, { result: 'error', msg: 'Event 7 was not in this queue', code: 'BAD_REQUEST' });
    await h.post('/drafts', { drafts: [streamDraft('three')] });
    t.match(await poller.collect(1), [{ id: 2 }], 'the next event takes the next id');
  });

  t.test('missing parameters', async (t) => {
    const noQueue = await h.get('/events', { last_event_id: -1 });
    t.same(noQueue.body, { result: 'error', msg: "Missing 'queue_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'queue_id' });
    const noLast = await h.get('/events', { queue_id: 'x' });
    t.same(noLast.body, { result: 'error', msg: "Missing 'last_event_id' argument", code: 'REQUEST_VARIABLE_MISSING', var_name: 'last_event_id' });
    const noDelete = await h.delete('/events');
    t.equal(noDelete.status, 400);
    t.match(noDelete.body, { code: 'REQUEST_VARIABLE_MISSING', var_name: 'queue_id' });
  });

  t.test('BAD_EVENT_QUEUE_ID for unknown, deleted and other users\' queues', async (t) => {
    const bad = (id: string) => ({ result: 'error', msg: `Bad event queue ID: ${id}`, code: 'BAD_EVENT_QUEUE_ID', queue_id: id });
    const unknown = await h.get('/events', { queue_id: 'no-such-queue', last_event_id: -1 });
    t.equal(unknown.status, 400);
    t.same(unknown.body, bad('no-such-queue'));

    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    const foreign = await sys.client(othello).get('/events', { queue_id: poller.queueId, last_event_id: -1 });
    t.same(foreign.body, bad(poller.queueId), "another user's queue is unknown to them");
    const foreignDelete = await sys.client(othello).delete('/events', { queue_id: poller.queueId });
    t.same(foreignDelete.body, bad(poller.queueId));

    const parked = h.get('/events', { queue_id: poller.queueId, last_event_id: -1 });
    await new Promise((r) => setTimeout(r, 200));
    const del = await h.delete('/events', { queue_id: poller.queueId });
    t.same(del.body, { result: 'success', msg: '' });
    t.same((await parked).body, bad(poller.queueId), 'the parked poll ends: the queue is gone');
    t.same((await h.get('/events', { queue_id: poller.queueId, last_event_id: -1 })).body, bad(poller.queueId));
    const again = await h.delete('/events', { queue_id: poller.queueId });
    t.equal(again.status, 400);
    t.same(again.body, bad(poller.queueId), 'deleting twice');
  });

  t.test('a user may hold a limited number of queues', async (t) => {
    const polonius = sys.client(sys.people.polonius);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await register(polonius, { event_types: ['drafts'] })).queue_id);
    const refused = await polonius.post('/register', { event_types: ['drafts'] });
    t.equal(refused.status, 400);
    t.same(refused.body, { result: 'error', msg: 'Too many event queues: at most 20 per user. Delete unused ones with DELETE /events.', code: 'BAD_REQUEST' });
    await polonius.delete('/events', { queue_id: ids[0] as string });
    t.equal((await polonius.post('/register', { event_types: ['drafts'] })).status, 200, 'a deleted queue frees its place');
  });

  t.test('a queue that buffers too many unacknowledged events is dropped', async (t) => {
    const bot = sys.client(sys.people.bot);
    const { poller } = await QueuePoller.register(bot, { event_types: ['drafts'] });
    for (let i = 0; i < 30; i++) await bot.post('/drafts', { drafts: [streamDraft(`d${i}`)] });
    // Ask without acknowledging (last_event_id -1) until all thirty were delivered.
    let waiting: unknown[] = [];
    for (let i = 0; i < 100 && waiting.length < 30; i++) {
      waiting = (await bot.get('/events', { queue_id: poller.queueId, last_event_id: -1, dont_block: true })).body.events as unknown[];
      if (waiting.length < 30) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.equal(waiting.length, 30, 'thirty unacknowledged events fit');
    await bot.post('/drafts', { drafts: [streamDraft('one too many')] });
    // Delivery is asynchronous: ask (without acknowledging) until the queue is gone.
    let r = await bot.get('/events', { queue_id: poller.queueId, last_event_id: -1, dont_block: true });
    for (let i = 0; i < 100 && r.status === 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      r = await bot.get('/events', { queue_id: poller.queueId, last_event_id: -1, dont_block: true });
    }
    t.equal(r.status, 400);
    t.match(r.body, { code: 'BAD_EVENT_QUEUE_ID', queue_id: poller.queueId });
  });

  t.test('queue_lifespan_secs: an idle queue expires', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(iago), { event_types: ['drafts'], queue_lifespan_secs: 1 });
    t.same(await poller.poll({ dontBlock: true }), []);
    await new Promise((r) => setTimeout(r, 1300));
    const r = await sys.client(iago).get('/events', { queue_id: poller.queueId, last_event_id: -1, dont_block: true });
    t.match(r.body, { code: 'BAD_EVENT_QUEUE_ID' });
  });

  t.test('losing Redis data answers BAD_EVENT_QUEUE_ID, never a gap, and new queues work', async (t) => {
    const { poller } = await QueuePoller.register(h, { event_types: ['drafts'] });
    await h.post('/drafts', { drafts: [streamDraft('before the flush')] });
    await poller.collect(1);
    const parked = h.get('/events', { queue_id: poller.queueId, last_event_id: poller.lastEventId });
    await new Promise((r) => setTimeout(r, 200));
    // FLUSHALL, limited to this test's keys.
    const redis = new Redis(sys.env.infra.redisUrl);
    t.teardown(() => redis.disconnect());
    const keys = await redis.keys(`${sys.env.prefix}:evq:*`);
    t.ok(keys.length > 0);
    await redis.del(...keys);
    await h.post('/drafts', { drafts: [streamDraft('after the flush')] });
    const p = await parked;
    t.match(p.body, { code: 'BAD_EVENT_QUEUE_ID', queue_id: poller.queueId }, 'the parked poll learns at its heartbeat at the latest');
    const fresh = await QueuePoller.register(h, { event_types: ['drafts'] });
    t.ok(fresh.state.drafts === undefined || Array.isArray(fresh.state.drafts));
    await h.post('/drafts', { drafts: [streamDraft('new queue')] });
    t.match(await fresh.poller.collect(1), [{ type: 'drafts', drafts: [{ content: 'new queue' }] }], 'delivery resumes for the new queue');
  });

  t.test('register answers 503 when an owner of the state does not answer, and leaves no queue behind', async (t) => {
    const o = sys.client(othello);
    const before = await register(o, { event_types: ['drafts'] });
    await o.delete('/events', { queue_id: before.queue_id });
    await sys.stopService('drafts');
    const r = await o.post('/register', { event_types: ['drafts'] });
    t.equal(r.status, 503);
    t.same(r.body, { result: 'error', msg: 'Service temporarily unavailable, try again', code: 'SERVICE_UNAVAILABLE' });
    const other = await o.post('/register', { event_types: ['realm_user'] });
    t.equal(other.status, 200, 'types the missing service does not own still work');
    await o.delete('/events', { queue_id: other.body.queue_id as string });
    const redis = new Redis(sys.env.infra.redisUrl);
    t.teardown(() => redis.disconnect());
    t.same(await redis.smembers(`${sys.env.prefix}:evq:user:${othello.user_id}`), [], 'the failed registration left no queue');
    await sys.startReplica('drafts');
  });
});

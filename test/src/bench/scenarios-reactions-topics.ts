/**
 * Issue 9's benchmarks:
 *
 * - `reactions-delivery` (default): a stream of N subscribers (default 50), each of the
 *   others holding a live queue for `reaction` events and long-polling without pause; one
 *   subscriber adds reactions at a fixed rate (default 25/s, `--opt rate=R`), each a new
 *   emoji on one of the stream's messages. Requests go out on schedule whatever is
 *   outstanding (open model). Measured: the POST latency (from its due time), and the
 *   delivery latency, from the POST's response to another subscriber's long-poll returning
 *   the event (0 ms when the event came first, counted in `details.early`).
 * - `stream-topics` (default): GET /users/me/{stream_id}/topics on a stream of 100,000
 *   messages (`--opt topic_messages=N`) over 500 topics (`--opt topics=T`), at a fixed rate
 *   (`--opt rate=R`, default 25). Seeds through SQL, so it needs the runner's own system.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { emojiTables } from '@zc/markdown';
import { createPool } from '@zc/shared/db';
import { LatencyHistogram } from './histogram.js';
import { basicAuth, type LoadTarget } from './load.js';
import { defineScenario, type BenchAccount, type BenchSystem, type Scenario } from './scenario.js';
import { createAccounts, registerQueue } from './scenarios-events.js';
import { seedMessages } from './seed-messages.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const bench = (who: BenchAccount) => ({ authorization: basicAuth(who), 'user-agent': 'ZulipBench/1.0' });

/** Messages the reactions go to: each gets the emoji names in turn, so no request repeats a reaction. */
const TARGET_MESSAGES = 20;

interface ReactionRun {
  post: LatencyHistogram;
  delivery: LatencyHistogram;
  early: number;
  expected: number;
  seen: number;
  failed: number;
}

async function reactionDelivery(sys: BenchSystem, o: { subscribers: number; rate: number; seconds: number; log(l: string): void }): Promise<ReactionRun> {
  const members = await createAccounts(sys, o.subscribers, 'react');
  const reactor = members[0] as BenchAccount;
  const stream = `bench-reactions-${Date.now()}`;
  const sub = await sys.client(sys.admin).post('/users/me/subscriptions', { subscriptions: [{ name: stream }], principals: members.map((m) => m.user_id) });
  if (sub.body.result !== 'success') throw new Error(`subscribe failed: ${String(sub.body.msg)}`);
  const messageIds: number[] = [];
  for (let i = 0; i < TARGET_MESSAGES; i++) {
    const r = await sys.client(reactor).post('/messages', { type: 'stream', to: stream, topic: 'reactions', content: `react to ${i}` });
    if (typeof r.body.id !== 'number') throw new Error(`send failed: ${JSON.stringify(r.body)}`);
    messageIds.push(r.body.id);
  }
  // Canonical names only, so that no two requests name the same emoji.
  const names = [...new Set(emojiTables().codeToName.values())];
  const total = Math.min(Math.round(o.rate * o.seconds), names.length * TARGET_MESSAGES);

  const pools = sys.gatewayUrls.map((u) => new Pool(u, { connections: o.subscribers + 8, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 }));
  const receivers = members.slice(1);
  const queues = await Promise.all(receivers.map((m, i) => registerQueue(pools[i % pools.length] as Pool, m, { event_types: ['reaction'], fetch_event_types: [] })));

  const run: ReactionRun = { post: new LatencyHistogram(), delivery: new LatencyHistogram(), early: 0, expected: 0, seen: 0, failed: 0 };
  const acceptedAt = new Map<string, number>();
  const pending = new Map<string, number[]>();
  const record = (k: string, arrived: number) => {
    const accepted = acceptedAt.get(k);
    if (accepted === undefined) {
      pending.set(k, [...(pending.get(k) ?? []), arrived]);
      return;
    }
    if (arrived < accepted) run.early++;
    run.delivery.record(Math.max(0, arrived - accepted));
    run.seen++;
  };
  let polling = true;
  const loops = receivers.map(async (m, i) => {
    const q = queues[i] as { queueId: string; lastEventId: number };
    const pool = pools[i % pools.length] as Pool;
    while (polling) {
      let body: { events?: Array<{ id: number; type: string; message_id?: number; emoji_name?: string }> };
      try {
        const r = await pool.request({ method: 'GET', path: `/api/v1/events?queue_id=${q.queueId}&last_event_id=${q.lastEventId}`, headers: bench(m) });
        body = (await r.body.json()) as typeof body;
      } catch (err) {
        if (!polling) return; // the pools are destroyed at the end, under parked polls
        throw err;
      }
      const now = performance.now();
      for (const e of body.events ?? []) {
        q.lastEventId = Math.max(q.lastEventId, e.id);
        if (e.type === 'reaction' && e.message_id !== undefined) record(`${e.message_id}:${e.emoji_name ?? ''}`, now);
      }
    }
  });
  await sleep(500);

  const sender = new Pool(sys.baseUrl, { connections: 32, pipelining: 1 });
  const headers = { ...bench(reactor), 'content-type': 'application/x-www-form-urlencoded' };
  const start = performance.now();
  const posts: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / o.rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const messageId = messageIds[i % TARGET_MESSAGES] as number;
    const name = names[Math.floor(i / TARGET_MESSAGES)] as string;
    posts.push(
      (async () => {
        const r = await sender.request({ method: 'POST', path: `/api/v1/messages/${messageId}/reactions`, headers, body: new URLSearchParams({ emoji_name: name }).toString() });
        const text = await r.body.text();
        const now = performance.now();
        run.post.record(now - due);
        if (r.statusCode !== 200) {
          run.failed++;
          return;
        }
        const k = `${messageId}:${name}`;
        acceptedAt.set(k, now);
        run.expected += receivers.length;
        for (const arrived of pending.get(k) ?? []) record(k, arrived);
        pending.delete(k);
        void text;
      })(),
    );
  }
  await Promise.all(posts);
  const deadline = Date.now() + 10_000;
  while (run.seen < run.expected && Date.now() < deadline) await sleep(100);
  polling = false;
  o.log(`reactions: ${run.seen}/${run.expected} events seen, ${run.failed} posts failed`);
  await sender.close();
  // The parked polls end at their heartbeat; do not wait for them.
  void Promise.allSettled(loops).then(() => Promise.allSettled(pools.map((p) => p.close())));
  setTimeout(() => void Promise.allSettled(pools.map((p) => p.destroy())), 1000).unref();
  return run;
}

const reactionsDelivery = defineScenario({
  name: 'reactions-delivery',
  description: "reaction latency to the other subscribers' live queues (stream of 50, fixed rate)",
  default: true,
  async run(ctx) {
    const subscribers = Number(ctx.options.extra.subscribers ?? 50);
    const rate = Number(ctx.options.extra.rate ?? 25);
    const seconds = Number(ctx.options.extra.seconds ?? Math.max(5, ctx.options.stepSeconds));
    const r = await reactionDelivery(ctx.sys, { subscribers, rate, seconds, log: ctx.log });
    const post = r.post.summary();
    const delivery = r.delivery.summary();
    return {
      headlines: [
        { label: `reaction delivery p50 at ${rate}/s to ${subscribers - 1}`, value: delivery.p50, unit: 'ms', budget: { op: '<', value: 10 } },
        { label: `reaction delivery p99 at ${rate}/s to ${subscribers - 1}`, value: delivery.p99, unit: 'ms', budget: { op: '<', value: 50 } },
        { label: `reaction POST p99 at ${rate}/s`, value: post.p99, unit: 'ms', budget: { op: '<', value: 50 } },
        { label: 'reaction events lost', value: r.expected - r.seen, unit: '', budget: { op: '<=', value: 0 } },
      ],
      details: { post, delivery, early: r.early, failed: r.failed },
    };
  },
});

interface TopicsState {
  streamId: number;
  reader: BenchAccount;
  topics: number;
  messages: number;
}

const streamTopics = defineScenario<TopicsState>({
  name: 'stream-topics',
  description: 'GET /users/me/{stream_id}/topics on a stream of 100,000 messages over 500 topics (fixed rate)',
  default: true,
  needsInProcess: true,
  async setup(sys, options) {
    if (!sys.infra) throw new Error('stream-topics seeds through SQL and needs the runner’s own system');
    const reader = sys.people.hamlet ?? sys.admin;
    // The read model learns users from events; one request makes sure it knows the reader.
    await sys.client(reader).get('/messages', { anchor: 'newest', num_before: 0, num_after: 0 });
    const db = createPool(sys.infra.databaseUrl, { max: 1 });
    const realmId = await db
      .query<{ realm_id: number }>('SELECT realm_id FROM messages.user_account WHERE id = $1', [reader.user_id])
      .then((r) => r.rows[0]?.realm_id)
      .finally(() => db.end());
    if (realmId === undefined) throw new Error('the messages service does not know the bench reader yet');
    const messages = Number(options.extra.topic_messages ?? 100_000);
    const topics = Number(options.extra.topics ?? 500);
    const seed = await seedMessages({
      databaseUrl: sys.infra.databaseUrl,
      realmId,
      userIds: [reader.user_id],
      messages,
      streams: 1,
      topicsPerStream: topics,
      subscribersPerStream: 1,
      firstStreamId: 3_000_000,
      streamPrefix: `bench-topics-${Date.now().toString(36)}`,
    });
    return { streamId: (seed.streams[0] as { stream_id: number }).stream_id, reader, topics, messages };
  },
  async run(ctx) {
    const { streamId, reader, topics, messages } = ctx.state;
    const rate = Number(ctx.options.extra.rate ?? 25);
    const target: LoadTarget = {
      name: `GET /users/me/{id}/topics (${messages} messages)`,
      request: () => ({ method: 'GET', path: `/api/v1/users/me/${streamId}/topics`, headers: bench(reader) }),
      check: (_status, body) => ((JSON.parse(body) as { topics?: unknown[] }).topics?.length === topics ? undefined : 'wrong topic count'),
    };
    await ctx.runStep({ ...target, name: `${target.name} (warm-up)` }, { rate, durationSeconds: 2 });
    const step = await ctx.runStep(target, { rate, durationSeconds: ctx.options.stepSeconds });
    return {
      headlines: [
        { label: `topics of a ${messages}-message stream p50 at ${rate}/s`, value: step.latency.p50, unit: 'ms' },
        { label: `topics of a ${messages}-message stream p99 at ${rate}/s`, value: step.latency.p99, unit: 'ms', budget: { op: '<', value: 50 } },
      ],
      steps: [step],
    };
  },
});

export const scenarios: Scenario[] = [reactionsDelivery, streamTopics];

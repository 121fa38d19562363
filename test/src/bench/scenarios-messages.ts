/**
 * The messages service's benchmark scenarios (DESIGN.md budgets), in the runner's
 * `Scenario` shape (scenario.ts):
 *
 * - `messages-send` (default): POST /messages to a stream of 50 subscribers, stepped rates
 *   (budget: ≥ 1,000 msg/s held), then a fixed 200 msg/s step (budget: p50 < 10 ms, p99 < 50 ms).
 * - `messages-history-topic`: GET /messages of 100 messages in one topic of a
 *   1,000,000-message realm (budget: p99 < 20 ms).
 * - `messages-first-unread`: GET /messages with anchor=first_unread in one stream, 50 each side.
 * - `messages-search`: a keyword-search narrow over the same realm (budget: p99 < 100 ms).
 *
 * The three history scenarios share one seed (seed-messages.ts), made once per bench system;
 * they need the runner's own system (they seed through SQL). Knobs (`--opt k=v`):
 * `messages=N` (seed size, default 1000000), `rate=R` (fixed rate of the history steps,
 * default 200), `subscribers=N` (send scenario, default 50).
 */
import { basicAuth, type LoadTarget } from './load.js';
import { defineScenario, type BenchAccount, type BenchContext, type BenchSystem, type Scenario } from './scenario.js';
import { seedMessages, type SeedResult } from './seed-messages.js';
import { createPool } from '@zc/shared/db';

const headersFor = (who: BenchAccount) => ({ authorization: basicAuth(who), 'user-agent': 'ZulipBench/1.0' });

function reader(sys: BenchSystem): BenchAccount {
  return sys.people.hamlet ?? sys.admin;
}

/** The realm id of the runner's system (the seed writes rows for it). */
export async function realmIdOf(sys: BenchSystem): Promise<number> {
  const pool = createPool((sys.infra as { databaseUrl: string }).databaseUrl, { max: 1 });
  try {
    const { rows } = await pool.query<{ realm_id: number }>('SELECT realm_id FROM messages.user_account WHERE id = $1', [reader(sys).user_id]);
    if (!rows[0]) throw new Error('the messages service does not know the bench reader yet');
    return rows[0].realm_id;
  } finally {
    await pool.end();
  }
}

let seeded: Promise<SeedResult> | undefined;

/** One seed per run, shared by the history scenarios. */
function seedOnce(sys: BenchSystem, extra: Record<string, string>, log: (l: string) => void): Promise<SeedResult> {
  seeded ??= (async () => {
    if (!sys.infra) throw new Error('history scenarios seed through SQL and need the runner’s own system');
    const { hamlet, iago, desdemona, othello, bot } = sys.people;
    const people = [hamlet, iago, desdemona, othello, bot].filter((p): p is BenchAccount => p !== undefined);
    // The read model learns users from events; ask once through the API so it knows them all.
    await sys.client(reader(sys)).get('/messages', { anchor: 'newest', num_before: 0, num_after: 0 });
    const messages = Number(extra.messages ?? 1_000_000);
    log(`seeding ${messages} messages…`);
    const r = await seedMessages({
      databaseUrl: sys.infra.databaseUrl,
      realmId: await realmIdOf(sys),
      userIds: people.map((p) => p.user_id),
      everywhere: [reader(sys).user_id],
      messages,
      subscribersPerStream: 4,
    });
    log(`seeded ${messages} messages and ${r.userMessageRows} per-user rows in ${(r.elapsedMs / 1000).toFixed(1)} s`);
    return r;
  })();
  return seeded;
}

function historyTarget(name: string, who: BenchAccount, query: (i: number) => Record<string, string>): LoadTarget {
  const headers = headersFor(who);
  return {
    name,
    request: (i) => ({ method: 'GET', path: `/api/v1/messages?${new URLSearchParams(query(i)).toString()}`, headers }),
    check: (_status, body) => (body.includes('"result":"success"') ? undefined : 'not success'),
  };
}

async function fixedRateStep(ctx: BenchContext<SeedResult>, target: LoadTarget) {
  const rate = Number(ctx.options.extra.rate ?? 200);
  // Unrecorded: straight after the seed the caches are cold and the server is still writing
  // the seed out, so whichever scenario ran first was charged for it (p99s several times the
  // warm ones). The budgets are about a server in its steady state.
  await ctx.runStep({ ...target, name: `${target.name} (warm-up)` }, { rate, durationSeconds: 2 });
  return ctx.runStep(target, { rate, durationSeconds: ctx.options.stepSeconds });
}

const historyTopic = defineScenario<SeedResult>({
  name: 'messages-history-topic',
  description: 'GET /messages: 100 messages in one topic of a 1,000,000-message realm (fixed rate)',
  needsInProcess: true,
  setup: (sys, options) => seedOnce(sys, options.extra, (l) => process.stderr.write(`${l}\n`)),
  async run(ctx) {
    const seed = ctx.state;
    const target = historyTarget('GET /messages topic (100)', reader(ctx.sys), (i) => {
      const s = seed.streams[i % seed.streams.length] as { stream_id: number };
      const topic = seed.topics[(i * 13) % seed.topics.length] as string;
      return { anchor: 'newest', num_before: '100', num_after: '0', narrow: JSON.stringify([['stream', String(s.stream_id)], ['topic', topic]]) };
    });
    const step = await fixedRateStep(ctx, target);
    return {
      headlines: [{ label: `topic history p99 at ${step.rate} req/s`, value: step.latency.p99, unit: 'ms', budget: { op: '<', value: 20 } }],
      steps: [step],
    };
  },
});

const firstUnread = defineScenario<SeedResult>({
  name: 'messages-first-unread',
  description: 'GET /messages anchor=first_unread in one stream, 50 each side (fixed rate)',
  needsInProcess: true,
  setup: (sys, options) => seedOnce(sys, options.extra, (l) => process.stderr.write(`${l}\n`)),
  async run(ctx) {
    const seed = ctx.state;
    const target = historyTarget('GET /messages first_unread', reader(ctx.sys), (i) => {
      const s = seed.streams[i % seed.streams.length] as { stream_id: number };
      return { anchor: 'first_unread', num_before: '50', num_after: '50', narrow: JSON.stringify([['stream', String(s.stream_id)]]) };
    });
    const step = await fixedRateStep(ctx, target);
    return { headlines: [{ label: `first_unread p99 at ${step.rate} req/s`, value: step.latency.p99, unit: 'ms', budget: { op: '<', value: 20 } }], steps: [step] };
  },
});

const search = defineScenario<SeedResult>({
  name: 'messages-search',
  description: 'GET /messages with a keyword-search narrow over a 1,000,000-message realm (fixed rate)',
  needsInProcess: true,
  setup: (sys, options) => seedOnce(sys, options.extra, (l) => process.stderr.write(`${l}\n`)),
  async run(ctx) {
    const seed = ctx.state;
    const target = historyTarget('GET /messages search', reader(ctx.sys), (i) => ({
      anchor: 'newest',
      num_before: '100',
      num_after: '0',
      narrow: JSON.stringify([['search', i % 2 === 0 ? seed.rareWord : seed.commonWord]]),
    }));
    const step = await fixedRateStep(ctx, target);
    return { headlines: [{ label: `keyword search p99 at ${step.rate} req/s`, value: step.latency.p99, unit: 'ms', budget: { op: '<', value: 100 } }], steps: [step] };
  },
});

export interface SendState {
  streamId: number;
  sender: BenchAccount;
}

/** A stream with `count` subscribers: through POST /users/me/subscriptions, or straight into the read model when that endpoint cannot serve. */
export async function streamWithSubscribers(sys: BenchSystem, count: number): Promise<SendState> {
  const sender = reader(sys);
  const members: BenchAccount[] = [sender];
  const stamp = Date.now().toString(36);
  for (let i = members.length; i < count; i++) members.push(await sys.createUser({ email: `bench-${stamp}-${i}@zulip.test`, full_name: `Bench ${i}` }));
  const name = `bench-send-${stamp}`;
  const sub = await sys.client(sender).post('/users/me/subscriptions', { subscriptions: [{ name }], principals: members.map((m) => m.user_id) });
  if (sub.status === 200) {
    const id = await sys.client(sender).get('/get_stream_id', { stream: name });
    if (id.status === 200) return { streamId: Number(id.body.stream_id), sender };
  }
  if (!sys.infra) throw new Error(`cannot create the bench stream: ${JSON.stringify(sub.body)}`);
  await sys.client(sender).get('/messages', { anchor: 'newest', num_before: 0, num_after: 0 });
  const seed = await seedMessages({
    databaseUrl: sys.infra.databaseUrl,
    realmId: await realmIdOf(sys),
    userIds: members.map((m) => m.user_id),
    messages: 0,
    streams: 1,
    subscribersPerStream: count,
    firstStreamId: 2_000_000,
    streamPrefix: name,
  });
  return { streamId: (seed.streams[0] as { stream_id: number }).stream_id, sender };
}

/**
 * The send scenarios' measurement: an unrecorded warm-up (the setup's user and subscription
 * events are still being consumed and the JIT is cold), a fixed 200 msg/s step, then the ramp.
 */
export async function measureSends(ctx: BenchContext<SendState>, o: { label: string; what: string; content: (i: number) => string }) {
  const headers = { ...headersFor(ctx.state.sender), 'content-type': 'application/x-www-form-urlencoded' };
  const target = (label: string): LoadTarget => ({
    name: label,
    request: (i) => ({ method: 'POST', path: '/api/v1/messages', headers, body: `type=stream&to=${ctx.state.streamId}&topic=bench&content=${encodeURIComponent(o.content(i))}` }),
    check: (_status, body) => (body.includes('"id"') ? undefined : 'no id'),
  });
  await ctx.runStep(target('warm-up'), { rate: 200, durationSeconds: 2 });
  const at200 = await ctx.runStep(target(`${o.label} at 200/s`), { rate: 200, durationSeconds: ctx.options.stepSeconds });
  const ramp = await ctx.rampUp(target(o.label));
  return {
    headlines: [
      { label: `${o.what} max rate held`, value: ramp.maxRateHeld, unit: 'msg/s', budget: { op: '>=' as const, value: 1000 } },
      { label: `${o.what} p50 at 200 msg/s`, value: at200.latency.p50, unit: 'ms', budget: { op: '<' as const, value: 10 } },
      { label: `${o.what} p99 at 200 msg/s`, value: at200.latency.p99, unit: 'ms', budget: { op: '<' as const, value: 50 } },
    ],
    steps: [at200, ...ramp.steps],
    details: { stopped_by: ramp.stoppedBy },
  };
}

const send = defineScenario<SendState>({
  name: 'messages-send',
  description: 'POST /messages to a stream of 50 subscribers: max rate held, then latency at 200 msg/s',
  default: true,
  setup: (sys, options) => streamWithSubscribers(sys, Number(options.extra.subscribers ?? 50)),
  run: (ctx) => measureSends(ctx, { label: 'POST /messages', what: 'send (50 subscribers)', content: (i) => `message ${i}` }),
});

export const scenarios: Scenario[] = [send, historyTopic, firstUnread, search];

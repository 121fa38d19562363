/**
 * POST /register in a 5,000-person realm (issue 8): the realm_users list and the settings
 * objects are the bulk of every client's start. The extra people are written straight into the
 * users service's table (benchmarks only: no events, no credentials that work), then one member
 * registers (all fetch types, as a client of our level) and drops the queue again, one after
 * the other, so the figure is the latency of one start.
 */
import { createPool } from '@zc/shared/db';
import { LatencyHistogram } from './histogram.js';
import { basicAuth } from './load.js';
import { defineScenario, type BenchSystem } from './scenario.js';

const PEOPLE = 5000;

async function seedPeople(sys: BenchSystem, count: number): Promise<number> {
  if (!sys.infra) throw new Error('register-5000 seeds through SQL: in-process runs only');
  const pool = createPool(sys.infra.databaseUrl);
  try {
    const reader = sys.people.hamlet ?? sys.admin;
    const { rows } = await pool.query<{ realm_id: number; n: number }>(
      'SELECT realm_id, (SELECT count(*)::int FROM users.user_profile p WHERE p.realm_id = u.realm_id) AS n FROM users.user_profile u WHERE id = $1',
      [reader.user_id],
    );
    const { realm_id: realmId, n } = rows[0] as { realm_id: number; n: number };
    const missing = Math.max(0, count - n);
    // Distinct, non-working key hashes (random bytes): these people never authenticate.
    await pool.query(
      `INSERT INTO users.user_profile (realm_id, delivery_email, full_name, api_key_hash, api_key_enc)
       SELECT $1, 'bench-person-' || g || '@zulip.test', 'Bench Person ' || g, gen_random_uuid()::text::bytea, '\\x00'::bytea
       FROM generate_series(1, $2::int) g`,
      [realmId, missing],
    );
    return n + missing;
  } finally {
    await pool.end();
  }
}

const register5000 = defineScenario<{ people: number }>({
  name: 'register-5000',
  description: `POST /register (every fetch type) as a member of a ${PEOPLE}-person realm, one start after the other: p50/p99 latency`,
  default: true,
  needsInProcess: true,
  async setup(sys) {
    return { people: await seedPeople(sys, PEOPLE) };
  },
  async run(ctx) {
    const who = ctx.sys.people.hamlet ?? ctx.sys.admin;
    const headers = { authorization: basicAuth(who), 'user-agent': 'ZulipBench/1.0', 'content-type': 'application/x-www-form-urlencoded' };
    const hist = new LatencyHistogram();
    const rounds = Number(ctx.options.extra.rounds ?? 40);
    let bytes = 0;
    // CPU of the system per start (every service, and each one): steadier than latency on a shared
    // machine. What the services use idle (timers, polls) over the same time is taken off, from an
    // idle spell measured first.
    const idleBefore = ctx.cpuSecondsByService?.() ?? {};
    const idleMs = 2000;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const idleAfter = ctx.cpuSecondsByService?.() ?? {};
    const idlePerMs = Object.fromEntries(Object.entries(idleAfter).map(([k, v]) => [k, (v - (idleBefore[k] ?? 0)) / idleMs]));
    const cpuBefore = ctx.cpuSeconds?.();
    const byServiceBefore = ctx.cpuSecondsByService?.() ?? {};
    const runStarted = performance.now();
    for (let i = 0; i < rounds; i++) {
      const started = performance.now();
      const r = await fetch(`${ctx.sys.baseUrl}/api/v1/register`, { method: 'POST', headers, body: 'client_gravatar=true&apply_markdown=true' });
      const text = await r.text();
      hist.record(performance.now() - started);
      if (r.status !== 200) throw new Error(`register failed: ${r.status} ${text.slice(0, 200)}`);
      bytes = text.length;
      const { queue_id } = JSON.parse(text) as { queue_id: string };
      await fetch(`${ctx.sys.baseUrl}/api/v1/events?queue_id=${encodeURIComponent(queue_id)}`, { method: 'DELETE', headers });
    }
    const s = hist.summary();
    const runMs = performance.now() - runStarted;
    const cpuAfter = ctx.cpuSeconds?.();
    const idleSum = Object.values(idlePerMs).reduce((a, b) => a + b, 0) * runMs;
    const cpuMs = cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1000 - idleSum * 1000) / rounds : undefined;
    const byService = Object.fromEntries(
      Object.entries(ctx.cpuSecondsByService?.() ?? {}).map(([k, v]) => [
        k,
        Math.round(((v - (byServiceBefore[k] ?? 0) - (idlePerMs[k] ?? 0) * runMs) * 1e6) / rounds) / 1000,
      ]),
    );
    const cpuText = cpuMs === undefined ? '' : `, cpu above idle ${cpuMs.toFixed(1)} ms/start ${JSON.stringify(byService)}`;
    ctx.log(`register-5000: ${ctx.state.people} people, ${rounds} starts, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, ${bytes} bytes${cpuText}`);
    return {
      headlines: [
        { label: `/register p50 (${ctx.state.people} people)`, value: s.p50, unit: 'ms', budget: { op: '<', value: 200 } },
        { label: `/register p99 (${ctx.state.people} people)`, value: s.p99, unit: 'ms' },
        ...(cpuMs === undefined ? [] : [{ label: `/register system CPU per start, above idle (${ctx.state.people} people)`, value: cpuMs, unit: 'ms' }]),
      ],
      details: { people: ctx.state.people, rounds, response_bytes: bytes, cpu_ms_per_start_by_service: byService },
    };
  },
});

export const scenarios = [register5000];

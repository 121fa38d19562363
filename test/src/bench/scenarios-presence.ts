/**
 * Presence, the most frequent write of a chat server (issue 8's budgets):
 * - `presence-ping`: 10,000 online users each pinging once a minute (POST /users/me/presence,
 *   ping_only, as a client between its presence fetches), measured in steady state: every
 *   user pinged once before, more than the 55 s after which a ping is stored again, so each
 *   measured ping writes (the gateway's key cache outlives a ping interval, as with real clients,
 *   so each ping checks the cached key's credential tokens rather than the key itself).
 *   Headline: the share of one core the system's processes spend on it above what they spend
 *   idle (budget: under 10 %); the gross figure, idle included, is reported beside it.
 * - `presence-realm-read`: the presence of a 1,000-person realm, as clients fetch it with
 *   their ping (POST /users/me/presence: slim_presence, as the web app asks, and the full
 *   legacy format, as python-zulip-api and zulip-terminal ask) and as GET /realm/presence
 *   gives it (legacy format), in steady state (once everyone's coming online is recorded,
 *   after a warm-up at the rate); the first read of the realm by the gateway (a cold copy) is
 *   reported beside. Each step is 1,000 reads by default (20 s at 50/s), so that its p99
 *   rests on ten of them rather than three. Two more figures say where a slow read's time
 *   went: the gateway's own histogram (server-latency.ts: from the request's arrival to its
 *   answer handed to the kernel; budget: 99 % within 5 ms, the p99 on the server's clock), and
 *   the machine's floor (floor.ts: a bare Node server answering the same bytes to the same
 *   generator). On this 2-vCPU machine the floor's p99 came out at 3.3-8 ms between runs: a
 *   client-side p99 under 5 ms is at the edge of what any server gets measured from here.
 *
 * Both seed their own realm through SQL (accounts with API keys, no events: the users service
 * alone serves presence), reached through its own host name, so the bench realm's other
 * scenarios do not see these people.
 */
import { request } from 'undici';
import { createPool } from '@zc/shared/db';
import { ApiKeyVault, generateApiKey, realmStore } from '@zc/users/manage';
import { basicAuth, type LoadTarget } from './load.js';
import { defineScenario, type BenchAccount, type BenchSystem, type Scenario } from './scenario.js';
import { floorStep } from './floor.js';
import { routeBuckets, serverLatency, type ServerLatency } from './server-latency.js';

interface SeededRealm {
  host: string;
  accounts: BenchAccount[];
}

async function seedRealm(sys: BenchSystem, subdomain: string, n: number): Promise<SeededRealm> {
  const infra = sys.infra;
  if (!infra) throw new Error('presence scenarios seed through SQL and need the runner’s own system');
  const pool = createPool(infra.databaseUrl, { max: 1 });
  try {
    const realm = await realmStore.insert(pool, { subdomain, name: `Presence bench (${n})` });
    const vault = new ApiKeyVault(infra.secretKey);
    const keys = Array.from({ length: n }, () => generateApiKey());
    const emails = keys.map((_, i) => `presence${i}@${subdomain}.bench`);
    const { rows } = await pool.query<{ id: number; delivery_email: string }>(
      `INSERT INTO users.user_profile (realm_id, delivery_email, full_name, api_key_hash, api_key_enc)
       SELECT $1, e, 'Presence ' || o, h, c FROM unnest($2::text[], $3::bytea[], $4::bytea[]) WITH ORDINALITY AS x(e, h, c, o)
       RETURNING id::int AS id, delivery_email`,
      [realm.id, emails, keys.map((k) => vault.lookupHash(k)), keys.map((k) => vault.encrypt(k))],
    );
    const byEmail = new Map(rows.map((r) => [r.delivery_email, r.id]));
    return {
      host: `${subdomain}.${infra.rootDomain}`,
      accounts: emails.map((email, i) => ({ user_id: byEmail.get(email) as number, email, api_key: keys[i] as string, full_name: `Presence ${i + 1}` })),
    };
  } finally {
    await pool.end();
  }
}

function pingTarget(name: string, realm: SeededRealm, body: string): LoadTarget {
  const headers = realm.accounts.map((a) => ({ authorization: basicAuth(a), host: realm.host, 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'ZulipBench/1.0' }));
  return {
    name,
    request: (i) => ({ method: 'POST', path: '/api/v1/users/me/presence', headers: headers[i % headers.length] as Record<string, string>, body }),
    check: (_status, text) => (text.includes('"success"') ? undefined : 'not success'),
  };
}

// Monotonic microseconds (the clock of V8's .cpuprofile files), so a profile can be cut to a measured step.
const monoUs = () => Number(process.hrtime.bigint() / 1000n);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The processes a ping runs in: the gateway stores steady pings and the users service takes
 * those that come online. The others do nothing for a ping (no event, no bus message), so
 * their CPU in the step is their idle noise, reported beside the headline but not in it.
 * Redis's share (the ping's script) is not counted: the bench shares its Redis server.
 */
const PING_SERVICES = new Set(['gateway', 'users']);

const presencePing = defineScenario<SeededRealm>({
  name: 'presence-ping',
  description: '10,000 online users pinging presence once a minute: CPU share of one core (budget < 10 %)',
  default: true,
  needsInProcess: true,
  async setup(sys, options) {
    return seedRealm(sys, 'presence10k', Number(options.extra.users ?? 10_000));
  },
  async run(ctx) {
    const realm = ctx.state;
    const users = realm.accounts.length;
    const target = pingTarget('POST /users/me/presence (ping_only)', realm, 'status=active&ping_only=true');
    const warmRate = Number(ctx.options.extra.warm_rate ?? 250);
    const warmStart = Date.now();
    ctx.log(`presence-ping: every one of ${users} users comes online (${warmRate}/s)`);
    const warm = await ctx.runStep(target, { rate: warmRate, durationSeconds: Math.ceil(users / warmRate) });
    // The measured pings are each user's second, more than PRESENCE_UPDATE_MIN_FREQ_SECONDS (55 s)
    // after the first. What the services burn with nobody pinging (timers, sweeps, heartbeats) is
    // not the users' cost: it is measured over the end of that wait (once the warm-up's backlog is
    // served) and taken off (PING_SERVICES below says whose).
    const idleMs = Number(ctx.options.extra.idle_ms ?? 10_000);
    const wait = warmStart + 57_000 - Date.now();
    ctx.log(`presence-ping: waiting ${Math.round(Math.max(wait, idleMs) / 1000)} s for the steady state, the last ${idleMs / 1000} s idle`);
    await sleep(Math.max(0, wait - idleMs));
    const idleBefore = ctx.cpuSecondsByService?.() ?? {};
    await sleep(idleMs);
    const idleAfter = ctx.cpuSecondsByService?.() ?? {};
    const rate = Math.round(users / 60);
    const seconds = Number(ctx.options.extra.seconds ?? 15);
    const byBefore = ctx.cpuSecondsByService?.() ?? {};
    const steadyFrom = monoUs();
    const stepStarted = performance.now();
    const step = await ctx.runStep(target, { rate, durationSeconds: seconds });
    const stepMs = performance.now() - stepStarted;
    const steadyTo = monoUs();
    ctx.log(`presence-ping: steady step on the monotonic clock ${steadyFrom}..${steadyTo} us (cut --cpu-prof profiles to it)`);
    const byAfter = ctx.cpuSecondsByService?.() ?? {};
    const pings = step.completed;
    const perPingUs = (k: string, v: number) => Math.round(((v - (byBefore[k] ?? 0)) * 1e6) / pings);
    const idleUs = (k: string) => Math.round((((idleAfter[k] ?? 0) - (idleBefore[k] ?? 0)) / idleMs) * stepMs * 1e6) / pings;
    const grossByService = Object.fromEntries(Object.entries(byAfter).map(([k, v]) => [k, perPingUs(k, v)]));
    // Each service's difference is kept signed: its noise (a timer's burst in one window and not
    // the other) is as likely either way, so it cancels in a sum, whereas counting none below
    // zero added every idle service's noise to the cost.
    const netByService = Object.fromEntries(Object.entries(byAfter).map(([k, v]) => [k, Math.round(perPingUs(k, v) - idleUs(k))]));
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0) / 1000;
    const pick = (o: Record<string, number>, serving: boolean) => Object.fromEntries(Object.entries(o).filter(([k]) => PING_SERVICES.has(k) === serving));
    const headlines = [
      { label: `presence pings at ${users} users/min: p50`, value: step.latency.p50, unit: 'ms' },
      { label: `presence pings at ${users} users/min: p99`, value: step.latency.p99, unit: 'ms' },
    ];
    const share = (msPerPing: number) => Math.round(((msPerPing * rate) / 1000) * 1000) / 10;
    const cpuPerPing = step.systemCpuMsPerRequest;
    if (cpuPerPing !== undefined) {
      headlines.push({ label: 'presence ping CPU (services, gross)', value: Math.round(cpuPerPing * 1000) / 1000, unit: 'ms' });
      headlines.push({ label: `CPU share of one core, gross (idle included)`, value: share(cpuPerPing), unit: '%' });
    }
    if (Object.keys(netByService).length > 0) {
      const net = sum(pick(netByService, true));
      const others = sum(pick(netByService, false));
      ctx.log(`presence-ping: CPU us/ping gross ${JSON.stringify(grossByService)}, above idle ${JSON.stringify(netByService)}`);
      headlines.push({ label: `presence ping CPU above idle (${[...PING_SERVICES].join(', ')})`, value: Math.round(net * 1000) / 1000, unit: 'ms' });
      headlines.push({ label: 'other services above idle (noise, not counted)', value: Math.round(others * 1000) / 1000, unit: 'ms' });
      headlines.push({ label: `CPU share of one core for ${users} online users`, value: share(net), unit: '%', budget: { op: '<', value: 10 } } as (typeof headlines)[number]);
    }
    return { headlines, steps: [warm, step], details: { users, rate, warm_errors: warm.errors, cpu_us_per_ping_by_service: grossByService, cpu_us_per_ping_above_idle_by_service: netByService, steady_monotonic_us: [steadyFrom, steadyTo] } };
  },
});

/**
 * Makes sure the realm lists all its users (a ping that came online is dropped when the users
 * service is too busy to start it within its deadline, as under the burst above), pinging
 * again those not listed, and answers how long the first read took: the gateway's first
 * read of the realm, whose copy is cold.
 */
async function settleAndTimeFirstRead(baseUrl: string, realm: SeededRealm): Promise<number> {
  const call = (a: BenchAccount, method: 'GET' | 'POST', path: string, body?: string) =>
    request(`${baseUrl}${path}`, {
      method,
      // undici's request, not fetch: fetch drops the Host header that names the realm.
      headers: { authorization: basicAuth(a), host: realm.host, ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
  const reader = realm.accounts[0] as BenchAccount;
  let first: number | undefined;
  let missing: BenchAccount[] = [];
  for (let round = 0; round < 20; round++) {
    const started = performance.now();
    const res = await call(reader, 'GET', '/api/v1/realm/presence?slim_presence=true');
    const listed = ((await res.body.json()) as { presences?: Record<string, unknown> }).presences ?? {};
    first ??= Math.round((performance.now() - started) * 1000) / 1000;
    missing = realm.accounts.filter((a) => !(String(a.user_id) in listed));
    if (missing.length === 0) return first;
    for (let i = 0; i < missing.length; i += 20) {
      await Promise.all(missing.slice(i, i + 20).map(async (a) => (await call(a, 'POST', '/api/v1/users/me/presence', 'status=active&ping_only=true')).body.dump()));
    }
    await sleep(500);
  }
  throw new Error(`presence-realm-read: ${missing.length} of ${realm.accounts.length} users never came online`);
}

/**
 * Answers of the 1,000-person reads checked (every one lists everybody): one in this many. Each
 * is 66-150 KB, and decoding and scanning every one held the generator's event loop enough to
 * put a bare server's p99 at 8 ms (3.3 ms with none checked).
 */
const CHECK_EVERY = 10;

const presenceRealmRead = defineScenario<SeededRealm>({
  name: 'presence-realm-read',
  description: "a 1,000-person realm's presence: POST /users/me/presence (slim and full) and GET /realm/presence latency (budget p99 < 5 ms)",
  default: true,
  needsInProcess: true,
  async setup(sys) {
    return seedRealm(sys, 'presence1k', 1000);
  },
  async run(ctx) {
    const realm = ctx.state;
    const n = realm.accounts.length;
    await ctx.runStep(pingTarget('come online', realm, 'status=active&ping_only=true'), { rate: 500, durationSeconds: Math.ceil(n / 500) });
    // Each listed user once: their idle_timestamp (modern) or aggregated (legacy) member. Counted
    // with indexOf: a regex match building an array of 2,000 strings held the generator's event
    // loop for about as long as the server took to answer, and delayed other answers' timing.
    // The slim answer (the first checked), which the machine's floor below serves.
    let slimAnswer = '';
    const everyone = (text: string) => {
      slimAnswer ||= text;
      let listed = 0;
      for (const needle of ['"idle_timestamp"', '"aggregated"']) {
        for (let at = text.indexOf(needle); at >= 0 && listed < n; at = text.indexOf(needle, at + needle.length)) listed++;
      }
      return listed >= n ? undefined : 'not every user listed';
    };
    // One answer in CHECK_EVERY is checked (see LoadTarget.checkEvery), the first among them.
    const checked = { check: (_s: number, text: string) => everyone(text), checkEvery: CHECK_EVERY };
    const slim: LoadTarget = { ...pingTarget('POST /users/me/presence (slim, 1,000 users)', realm, 'status=active&slim_presence=true'), ...checked };
    // Steady reads are what the budget is about: the burst of users coming online (each one
    // announced by the users service) is let through first, and the measured steps start warm,
    // as ctx.rampUp starts its steps. The first read of a realm by a gateway (its copy is
    // cold: read whole from Redis) is timed on its own and reported beside them.
    const first = await settleAndTimeFirstRead(ctx.sys.baseUrl, realm);
    const rate = Number(ctx.options.extra.rate ?? 50);
    const seconds = Number(ctx.options.extra.seconds ?? 20);
    const warmSeconds = Number(ctx.options.extra.warm_seconds ?? 5);
    // The gateway's CPU per read (its idle included) moves far less than latency on a shared
    // machine; its own histogram shows what it took to answer, without the way there and back.
    const gatewayCpuMsPerRequest = async (target: LoadTarget, route: string, method: string) => {
      const buckets = async () => (ctx.gatewayMetrics ? routeBuckets(await ctx.gatewayMetrics(), route, method) : undefined);
      const before = ctx.cpuSecondsByService?.().gateway;
      const bucketsBefore = await buckets();
      const from = monoUs();
      const step = await ctx.runStep(target, { rate, durationSeconds: seconds });
      ctx.log(`presence-realm-read: ${target.name} on the monotonic clock ${from}..${monoUs()} us (cut --cpu-prof profiles to it)`);
      const after = ctx.cpuSecondsByService?.().gateway;
      const bucketsAfter = await buckets();
      const cpuMs = before === undefined || after === undefined || step.completed === 0 ? undefined : Math.round(((after - before) * 1e6) / step.completed) / 1000;
      const server = bucketsBefore && bucketsAfter ? serverLatency(bucketsBefore, bucketsAfter, 5) : undefined;
      return { step, cpuMs, server };
    };
    await ctx.runStep(slim, { rate, durationSeconds: warmSeconds });
    const { step: modern, cpuMs: modernCpu, server: modernServer } = await gatewayCpuMsPerRequest(slim, '/api/v1/users/me/presence', 'POST');
    const full: LoadTarget = { ...pingTarget('POST /users/me/presence (full, 1,000 users)', realm, 'status=active'), ...checked };
    await ctx.runStep(full, { rate, durationSeconds: warmSeconds });
    const { step: fullStep, cpuMs: fullCpu, server: fullServer } = await gatewayCpuMsPerRequest(full, '/api/v1/users/me/presence', 'POST');
    const headers = realm.accounts.map((a) => ({ authorization: basicAuth(a), host: realm.host }));
    const legacyTarget: LoadTarget = {
      name: 'GET /realm/presence (legacy, 1,000 users)',
      request: (i) => ({ method: 'GET', path: '/api/v1/realm/presence', headers: headers[i % n] as Record<string, string> }),
      ...checked,
    };
    await ctx.runStep(legacyTarget, { rate, durationSeconds: warmSeconds });
    const { step: legacy, cpuMs: legacyCpu, server: legacyServer } = await gatewayCpuMsPerRequest(legacyTarget, '/api/v1/realm/presence', 'GET');
    const floor = await floorStep(slimAnswer, { rate, durationSeconds: seconds, warmSeconds, ...checked });
    const floorLabel = `machine floor: a bare Node server answering the slim answer's ${Math.round(Buffer.byteLength(slimAnswer) / 1000)} KB, same generator and check`;
    const cpu = (label: string, value: number | undefined) => (value === undefined ? [] : [{ label, value, unit: 'ms' }]);
    // Bucket bounds, not interpolated percentiles: the histogram's bounds near here are 1, 2.5, 5 and 10 ms.
    const server = (label: string, s: ServerLatency | undefined) =>
      s === undefined || s.count === 0
        ? []
        : [
            { label: `${label}, as the gateway timed it: p99 at most`, value: s.p99AtMostMs, unit: 'ms' },
            // The "answered in under 5 ms", on the server's own clock: a p99 within 5 ms.
            { label: `${label}, as the gateway timed it: answered within 5 ms`, value: Math.round(s.shareWithin * 1000) / 10, unit: '%', budget: { op: '>=' as const, value: 99 } },
          ];
    return {
      headlines: [
        { label: '1,000-user presence, first read (cold copy)', value: first, unit: 'ms' },
        { label: '1,000-user presence (slim) p50', value: modern.latency.p50, unit: 'ms' },
        { label: '1,000-user presence (slim) p99', value: modern.latency.p99, unit: 'ms', budget: { op: '<', value: 5 } },
        ...cpu('1,000-user presence (slim), gateway CPU per read', modernCpu),
        ...server('1,000-user presence (slim)', modernServer),
        { label: '1,000-user presence (full) p50', value: fullStep.latency.p50, unit: 'ms' },
        { label: '1,000-user presence (full) p99', value: fullStep.latency.p99, unit: 'ms', budget: { op: '<', value: 5 } },
        ...cpu('1,000-user presence (full), gateway CPU per read', fullCpu),
        ...server('1,000-user presence (full)', fullServer),
        { label: 'GET /realm/presence 1,000 users p50', value: legacy.latency.p50, unit: 'ms' },
        { label: 'GET /realm/presence 1,000 users p99', value: legacy.latency.p99, unit: 'ms' },
        ...cpu('GET /realm/presence 1,000 users, gateway CPU per read', legacyCpu),
        ...server('GET /realm/presence 1,000 users', legacyServer),
        { label: `${floorLabel}: p50`, value: floor.latency.p50, unit: 'ms' },
        { label: `${floorLabel}: p99`, value: floor.latency.p99, unit: 'ms' },
      ],
      steps: [modern, fullStep, legacy, floor],
    };
  },
});

export const scenarios: Scenario[] = [presencePing, presenceRealmRead];

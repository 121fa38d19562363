/**
 * Presence, the most frequent write of a chat server (issue 8's budgets):
 * - `presence-ping`: 10,000 online users each pinging once a minute (POST /users/me/presence,
 *   ping_only, as a client between its presence fetches), measured in steady state: every
 *   user pinged once before, more than the 55 s after which a ping is stored again, so each
 *   measured ping writes and is authenticated afresh (the gateway's credential cache lives 30 s).
 *   Headline: the share of one core the system's processes spend on it (budget: under 10 %).
 * - `presence-realm-read`: the presence of a 1,000-person realm, as clients fetch it (POST
 *   /users/me/presence with slim_presence) and as GET /realm/presence gives it (legacy format).
 *
 * Both seed their own realm through SQL (accounts with API keys, no events: the users service
 * alone serves presence), reached through its own host name, so the bench realm's other
 * scenarios do not see these people.
 */
import { createPool } from '@zc/shared/db';
import { ApiKeyVault, generateApiKey, realmStore } from '@zc/users/manage';
import { basicAuth, type LoadTarget } from './load.js';
import { defineScenario, type BenchAccount, type BenchSystem, type Scenario } from './scenario.js';

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    const warmRate = Number(ctx.options.extra.warm_rate ?? 500);
    const warmStart = Date.now();
    ctx.log(`presence-ping: every one of ${users} users comes online (${warmRate}/s)`);
    const warm = await ctx.runStep(target, { rate: warmRate, durationSeconds: Math.ceil(users / warmRate) });
    // The measured pings are each user's second, more than PRESENCE_UPDATE_MIN_FREQ_SECONDS (55 s) after the first.
    const wait = warmStart + 57_000 - Date.now();
    if (wait > 0) {
      ctx.log(`presence-ping: waiting ${Math.round(wait / 1000)} s for the steady state`);
      await sleep(wait);
    }
    const rate = Math.round(users / 60);
    const seconds = Number(ctx.options.extra.seconds ?? 15);
    const step = await ctx.runStep(target, { rate, durationSeconds: seconds });
    const cpuPerPing = step.systemCpuMsPerRequest;
    const headlines = [
      { label: `presence pings at ${users} users/min: p50`, value: step.latency.p50, unit: 'ms' },
      { label: `presence pings at ${users} users/min: p99`, value: step.latency.p99, unit: 'ms' },
    ];
    if (cpuPerPing !== undefined) {
      headlines.push({ label: 'presence ping CPU (services)', value: Math.round(cpuPerPing * 1000) / 1000, unit: 'ms' });
      headlines.push({ label: `CPU share of one core for ${users} online users`, value: Math.round(((cpuPerPing * rate) / 1000) * 1000) / 10, unit: '%', budget: { op: '<', value: 10 } } as (typeof headlines)[number]);
    }
    return { headlines, steps: [warm, step], details: { users, rate, warm_errors: warm.errors } };
  },
});

const presenceRealmRead = defineScenario<SeededRealm>({
  name: 'presence-realm-read',
  description: "a 1,000-person realm's presence: POST /users/me/presence (slim) and GET /realm/presence latency (budget p99 < 5 ms)",
  default: true,
  needsInProcess: true,
  async setup(sys) {
    return seedRealm(sys, 'presence1k', 1000);
  },
  async run(ctx) {
    const realm = ctx.state;
    const n = realm.accounts.length;
    await ctx.runStep(pingTarget('come online', realm, 'status=active&ping_only=true'), { rate: 500, durationSeconds: Math.ceil(n / 500) });
    const everyone = (text: string) => ((text.match(/_timestamp"|"aggregated"/g) ?? []).length >= n ? undefined : 'not every user listed');
    const slim: LoadTarget = { ...pingTarget('POST /users/me/presence (slim, 1,000 users)', realm, 'status=active&slim_presence=true'), check: (_s, text) => everyone(text) };
    const rate = Number(ctx.options.extra.rate ?? 50);
    const seconds = Number(ctx.options.extra.seconds ?? 6);
    const modern = await ctx.runStep(slim, { rate, durationSeconds: seconds });
    const headers = realm.accounts.map((a) => ({ authorization: basicAuth(a), host: realm.host }));
    const legacyTarget: LoadTarget = {
      name: 'GET /realm/presence (legacy, 1,000 users)',
      request: (i) => ({ method: 'GET', path: '/api/v1/realm/presence', headers: headers[i % n] as Record<string, string> }),
      check: (_s, text) => everyone(text),
    };
    const legacy = await ctx.runStep(legacyTarget, { rate, durationSeconds: seconds });
    return {
      headlines: [
        { label: '1,000-user presence (slim) p50', value: modern.latency.p50, unit: 'ms' },
        { label: '1,000-user presence (slim) p99', value: modern.latency.p99, unit: 'ms', budget: { op: '<', value: 5 } },
        { label: 'GET /realm/presence 1,000 users p50', value: legacy.latency.p50, unit: 'ms' },
        { label: 'GET /realm/presence 1,000 users p99', value: legacy.latency.p99, unit: 'ms' },
      ],
      steps: [modern, legacy],
    };
  },
});

export const scenarios: Scenario[] = [presencePing, presenceRealmRead];

/**
 * A realm of many accounts for fan-out benchmarks, seeded through SQL. Creating 10,000
 * accounts through POST /users is quadratic (each one is announced to everyone already in the
 * realm: realm_user add and group events listing every member) and did not finish in the
 * bench's time; here the accounts are one INSERT, and the other services learn of them the
 * way they learn of any account: a `users.user.created` event per account in the users
 * service's outbox, relayed by the running service to their read models. The realm itself and
 * its owner are made by the management action (doCreateRealm), so its system groups,
 * notification bot and events are the real ones. No client events are written: the realm has
 * no event queues yet.
 */
import { performance } from 'node:perf_hooks';
import { loadConfig } from '@zc/shared/config';
import { usersEvents } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { addManyToOutbox } from '@zc/shared/outbox';
import { ApiKeyVault, doCreateRealm, generateApiKey, makeDeps, realmHostOf, toUserRecord } from '@zc/users/manage';
import type { BenchAccount, BenchSystem } from './scenario.js';

export interface SeededPeople {
  /** Host name of the realm (the gateway finds the realm by it). */
  host: string;
  realmId: number;
  /** The realm's owner: the stream's creator, who subscribes everyone. */
  owner: BenchAccount;
  /** The members, in creation order (the owner not among them). */
  members: BenchAccount[];
  elapsedMs: number;
}

/** Creates realm `subdomain` with an owner and `n` members; their events are in the users outbox when it returns. */
export async function seedPeople(sys: BenchSystem, subdomain: string, n: number): Promise<SeededPeople> {
  const infra = sys.infra;
  if (!infra) throw new Error('seeding accounts through SQL needs the runner’s own system');
  const t0 = performance.now();
  const pool = createPool(infra.databaseUrl, { max: 2 });
  try {
    const config = loadConfig({ databaseUrl: infra.databaseUrl, secretKey: infra.secretKey, rootDomain: infra.rootDomain, logLevel: 'silent' });
    const deps = makeDeps({ pool, config, log: createLogger({ service: 'bench-seed', level: 'silent' }) });
    const ownerPassword = generateApiKey();
    const created = await doCreateRealm(deps, {
      name: `Fan-out bench (${n})`,
      subdomain,
      owner: { email: `owner@${subdomain}.bench`, password: ownerPassword, full_name: 'Fan-out owner' },
    });
    const realm = created.realm;
    const vault = new ApiKeyVault(infra.secretKey);
    const keys = Array.from({ length: n }, () => generateApiKey());
    const emails = keys.map((_, i) => `member${i}@${subdomain}.bench`);
    const { rows } = await pool.query<Parameters<typeof toUserRecord>[0]>(
      `INSERT INTO users.user_profile (realm_id, delivery_email, full_name, api_key_hash, api_key_enc)
       SELECT $1, e, 'Member ' || o, h, c FROM unnest($2::text[], $3::bytea[], $4::bytea[]) WITH ORDINALITY AS x(e, h, c, o)
       ORDER BY o RETURNING *`,
      [realm.id, emails, keys.map((k) => vault.lookupHash(k)), keys.map((k) => vault.encrypt(k))],
    );
    const host = realmHostOf(deps, realm);
    await addManyToOutbox(
      pool,
      'users',
      rows.map((u) => ({ c: usersEvents.userCreated, payload: toUserRecord(u, realm, host) })),
    );
    const byEmail = new Map(rows.map((r) => [r.delivery_email, r.id]));
    return {
      host: `${subdomain}.${infra.rootDomain}`,
      realmId: realm.id,
      owner: { user_id: created.owner.id, email: created.owner.delivery_email, api_key: created.apiKey, full_name: 'Fan-out owner' },
      members: emails.map((email, i) => ({ user_id: byEmail.get(email) as number, email, api_key: keys[i] as string, full_name: `Member ${i + 1}` })),
      elapsedMs: performance.now() - t0,
    };
  } finally {
    await pool.end();
  }
}

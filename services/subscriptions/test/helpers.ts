/**
 * A subscriptions database of the test file's own (shared/testing), migrated, with deps on
 * it and a realm with named people in the read model, so actions and stores run without
 * the users service.
 */
import { Bus } from '@zc/shared/bus';
import { Role, type Actor, type RealmRecord, type UserRecord } from '@zc/shared/contracts';
import { createPool, runMigrations, type Pool } from '@zc/shared/db';
import { DIRECTORY_MIGRATIONS, Directory } from '@zc/shared/directory';
import { createLogger } from '@zc/shared/logging';
import { testEnv, type TestEnv } from '@zc/shared/testing';
import { SCHEMA, type SubscriptionsDeps } from '../src/deps.js';
import { MIGRATIONS_DIR } from '../src/service.js';

export const REALM_ID = 1;

export interface Person {
  id: number;
  role: number;
  email: string;
  actor: Actor;
}

export interface SubscriptionsTestDb {
  env: TestEnv;
  pool: Pool;
  deps: SubscriptionsDeps;
  people: { owner: Person; admin: Person; member: Person; other: Person; guest: Person };
  /** Outbox rows written so far, oldest first. */
  outbox(): Promise<Array<{ subject: string; payload: Record<string, unknown> }>>;
  clearOutbox(): Promise<void>;
}

/** A user as the users service publishes it, joined a year ago. */
export function personRecord(id: number, name: string, role: number): UserRecord {
  return {
    user_id: id,
    realm_id: REALM_ID,
    email: `${name}@zulip.test`,
    delivery_email: `${name}@zulip.test`,
    full_name: name,
    role,
    is_active: true,
    is_bot: false,
    bot_type: null,
    bot_owner_id: null,
    timezone: '',
    avatar_source: 'G',
    avatar_version: 1,
    date_joined: new Date(Date.now() - 365 * 24 * 3600 * 1000).toISOString(),
  };
}

/** The test realm as the users service publishes it. */
export function realmRecord(settings: Record<string, unknown> = {}): RealmRecord {
  return { realm_id: REALM_ID, subdomain: '', name: 'Elsinore', description: '', deactivated: false, url: 'http://zulip.test:9991', settings, date_created: 0 };
}

export async function subscriptionsTestDb(t: { teardown(fn: () => unknown): void }, settings: Partial<SubscriptionsDeps['settings']> = {}): Promise<SubscriptionsTestDb> {
  const env = await testEnv(t);
  const pool = createPool(env.databaseUrl, { max: 4 });
  t.teardown(() => pool.end());
  await runMigrations(pool, SCHEMA, MIGRATIONS_DIR, [DIRECTORY_MIGRATIONS]);
  const log = createLogger({ service: 'subscriptions-test', level: 'silent' });
  // Nothing serves this prefix: an action that asked the users service would fail loudly.
  const bus = await Bus.connect({ url: env.infra.natsUrl, prefix: env.prefix, name: 'subscriptions-test', log, defaultTimeoutMs: 500 });
  t.teardown(() => bus.close());
  const directory = new Directory({ schema: SCHEMA, pool, bus });
  const deps: SubscriptionsDeps = { pool, bus, log, settings: { webPublicStreamsEnabled: false, newRealmStreams: false, ...settings }, directory };

  const specs: Array<[keyof SubscriptionsTestDb['people'], number, number]> = [
    ['owner', 1, Role.OWNER],
    ['admin', 2, Role.ADMINISTRATOR],
    ['member', 3, Role.MEMBER],
    ['other', 4, Role.MEMBER],
    ['guest', 5, Role.GUEST],
  ];
  await directory.store.upsertUsers(pool, specs.map(([name, id, role]) => personRecord(id, name, role)));
  await directory.store.upsertRealm(pool, realmRecord({ enable_spectator_access: true }));
  const people = Object.fromEntries(
    specs.map(([name, id, role]) => {
      const email = `${name}@zulip.test`;
      return [name, { id, role, email, actor: { realm_id: REALM_ID, user_id: id, role, email, full_name: name, is_bot: false } }];
    }),
  ) as SubscriptionsTestDb['people'];

  return {
    env,
    pool,
    deps,
    people,
    async outbox() {
      const { rows } = await pool.query<{ subject: string; payload: Record<string, unknown> }>('SELECT subject, payload FROM subscriptions.outbox ORDER BY id');
      return rows;
    },
    async clearOutbox() {
      await pool.query('DELETE FROM subscriptions.outbox');
    },
  };
}

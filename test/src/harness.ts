/**
 * A whole system in one test process: every service started in-process against this test
 * file's own database and prefixes (shared/testing), the gateway on a free port, and a realm
 * with named people (Zulip-style fixtures). Services can run as several replicas.
 */
import { loadConfig, type SharedConfig } from '@zc/shared/config';
import { Role } from '@zc/shared/contracts';
import { createPool, runMigrations } from '@zc/shared/db';
import { startService, type RunningService, type ServiceDefinition } from '@zc/shared/service';
import { testEnv, type TestEnv } from '@zc/shared/testing';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { draftsService } from '@zc/drafts';
import { eventsService } from '@zc/events';
import { gatewayService } from '@zc/gateway';
import { messagesService } from '@zc/messages';
import { subscriptionsService } from '@zc/subscriptions';
import { uploadsService, type UploadsSettings } from '@zc/uploads';
import { usersService } from '@zc/users';
import { doCreateRealm, doCreateUser, doGrant, makeDeps, MIGRATIONS_DIR as USERS_MIGRATIONS_DIR } from '@zc/users/manage';
import { createLogger, type Logger } from '@zc/shared/logging';
import { ApiClient } from './client.js';

export type ServiceName = 'users' | 'subscriptions' | 'messages' | 'drafts' | 'uploads' | 'events' | 'gateway';

export interface Account {
  user_id: number;
  email: string;
  api_key: string;
  full_name: string;
  password: string;
}

export interface System {
  env: TestEnv;
  baseUrl: string;
  /** Base URLs of every gateway replica. */
  gatewayUrls: string[];
  realmId: number;
  /** The development realm's people: iago (owner), desdemona (administrator), hamlet and othello (members), polonius (guest), and a bot. */
  people: { iago: Account; desdemona: Account; hamlet: Account; othello: Account; polonius: Account; bot: Account };
  client(a: Account, opts?: { baseUrl?: string; userAgent?: string; host?: string }): ApiClient;
  anonymous(opts?: { baseUrl?: string; host?: string }): ApiClient;
  /** Creates one more account in the realm. */
  createUser(a: { email: string; full_name: string; role?: number; is_bot?: boolean; password?: string }): Promise<Account>;
  /** Running instances by service name (several when replicated). */
  services: Map<ServiceName, RunningService[]>;
  /** Relays every service's pending outbox rows now. */
  flushOutboxes(): Promise<void>;
  stopService(name: ServiceName, index?: number): Promise<void>;
  startReplica(name: ServiceName): Promise<RunningService>;
  stop(): Promise<void>;
}

interface Teardownable {
  teardown(fn: () => unknown): void;
}

export interface SystemOptions {
  replicas?: Partial<Record<ServiceName, number>>;
  /** Services to start (default: all). */
  only?: ServiceName[];
  gateway?: { rateLimitPerMinute?: number; rateLimitPerIpPerMinute?: number; authFailuresPerIpPerMinute?: number; authCacheTtlMs?: number; maxConcurrentPerUser?: number };
  /** Uploads settings (default: local disk in a fresh temporary directory, no sweeper). */
  uploads?: Partial<UploadsSettings>;
  /** Shared settings every service reads (e.g. the upload size limit /register announces). */
  config?: Partial<SharedConfig>;
}

const ORDER: ServiceName[] = ['users', 'subscriptions', 'messages', 'drafts', 'uploads', 'events', 'gateway'];

export async function startSystem(t: Teardownable, opts: SystemOptions = {}): Promise<System> {
  const env = await testEnv(t);
  Object.assign(env.config, opts.config);
  const log = createLogger({ service: 'test', level: process.env.LOG_LEVEL ?? 'silent' });
  const services = new Map<ServiceName, RunningService[]>();
  const gateways: Array<{ port(): number }> = [];
  const uploadsDir = mkdtempSync(path.join(os.tmpdir(), 'zc-uploads-'));
  t.teardown(() => rmSync(uploadsDir, { recursive: true, force: true }));

  const definition = (name: ServiceName): ServiceDefinition => {
    switch (name) {
      case 'users':
        return usersService;
      case 'subscriptions':
        return subscriptionsService;
      case 'messages':
        return messagesService;
      case 'drafts':
        return draftsService;
      case 'uploads':
        return uploadsService({ storage: { kind: 'local', dir: uploadsDir }, sweepIntervalSeconds: 0, ...opts.uploads });
      case 'events':
        return eventsService;
      case 'gateway': {
        const g = gatewayService({ port: 0, host: '127.0.0.1', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, authFailuresPerIpPerMinute: 0, maxConcurrentPerUser: 0, ...opts.gateway });
        gateways.push(g);
        return g;
      }
    }
  };

  const startReplica = async (name: ServiceName) => {
    const running = await startService(definition(name), { config: env.config, log: log.child({ service: name }), admin: false });
    const list = services.get(name) ?? [];
    list.push(running);
    services.set(name, list);
    return running;
  };

  const wanted = opts.only ?? ORDER;
  for (const name of ORDER.filter((n) => wanted.includes(n))) {
    const count = opts.replicas?.[name] ?? 1;
    for (let i = 0; i < count; i++) await startReplica(name);
  }

  const { pool, realmId, people, account } = await seedPeople(env, log);

  const gatewayUrls = gateways.map((g) => `http://127.0.0.1:${g.port()}`);
  const baseUrl = gatewayUrls[0] ?? '';
  const flushOutboxes = async () => {
    for (const list of services.values()) for (const s of list) await s.flushOutbox();
  };
  await flushOutboxes();

  const sys: System = {
    env,
    baseUrl,
    gatewayUrls,
    realmId,
    people,
    services,
    client: (a, o = {}) => new ApiClient(o.baseUrl ?? baseUrl, { email: a.email, apiKey: a.api_key }, o),
    anonymous: (o = {}) => new ApiClient(o.baseUrl ?? baseUrl, undefined, o),
    createUser: (a) => account(a.email, a.full_name, a.role ?? Role.MEMBER, a.is_bot ?? false, a.password),
    flushOutboxes,
    startReplica,
    async stopService(name, index = 0) {
      const list = services.get(name) ?? [];
      const [s] = list.splice(index, 1);
      await s?.stop();
    },
    async stop() {
      for (const name of [...ORDER].reverse()) {
        for (const s of services.get(name) ?? []) await s.stop();
      }
      services.clear();
      await pool.end();
    },
  };
  t.teardown(() => sys.stop());
  return sys;
}

export type People = System['people'];

/**
 * Creates the realm and its named people (iago the owner, holding can_create_users) in the
 * database of `env`, through the users service's actions; the outbox carries the events to
 * whichever services run. Returns a pool the caller ends, and a function making more people.
 */
export async function seedPeople(env: TestEnv, log: Logger) {
  const config = loadConfig(env.config);
  const pool = createPool(env.databaseUrl, { max: 2 });
  const deps = makeDeps({ pool, config, log });
  await runMigrations(pool, 'users', USERS_MIGRATIONS_DIR);
  const password = 'correct horse battery staple';
  const created = await doCreateRealm(deps, {
    name: 'Elsinore',
    subdomain: '',
    owner: { email: 'iago@zulip.test', password, full_name: 'Iago' },
  });
  const realm = created.realm;
  const account = async (email: string, full_name: string, role: number, is_bot = false, pw = password): Promise<Account> => {
    const { user, apiKey } = await doCreateUser(deps, realm, {
      email,
      password: pw,
      full_name,
      role,
      is_bot,
      bot_owner_id: is_bot ? created.owner.id : null,
    });
    return { user_id: user.id, email, api_key: apiKey, full_name, password: pw };
  };
  const people = {
    iago: { user_id: created.owner.id, email: 'iago@zulip.test', api_key: created.apiKey, full_name: 'Iago', password },
    desdemona: await account('desdemona@zulip.test', 'Desdemona', Role.ADMINISTRATOR),
    hamlet: await account('hamlet@zulip.test', 'King Hamlet', Role.MEMBER),
    othello: await account('othello@zulip.test', 'Othello, the Moor of Venice', Role.MEMBER),
    polonius: await account('polonius@zulip.test', 'Polonius', Role.GUEST),
    bot: await account('bot@zulip.test', 'Generic bot', Role.MEMBER, true),
  };
  await doGrant(deps, realm, 'iago@zulip.test', 'can_create_users');
  return { pool, realmId: realm.id, people, account };
}

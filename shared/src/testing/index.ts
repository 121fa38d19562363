/**
 * Per-test-file isolation (DEVELOPERS.md): each call gets its own PostgreSQL database, NATS
 * subject prefix and Redis key prefix, and removes them at teardown. Infrastructure comes
 * from `ZC_TEST_INFRA`: `local` uses the servers at their standard addresses, `containers`
 * starts them with testcontainers, `auto` (default) uses containers only when a Docker
 * engine answers.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Redis } from 'ioredis';
import type { SharedConfig } from '../config/index.js';

export interface Infra {
  adminDatabaseUrl: string;
  redisUrl: string;
  natsUrl: string;
}

export interface TestEnv {
  /** Config overrides that point a service at this test's database and prefixes. */
  config: Partial<SharedConfig>;
  databaseUrl: string;
  prefix: string;
  infra: Infra;
}

interface Teardownable {
  teardown(fn: () => unknown): void;
}

const LOCAL: Infra = {
  adminDatabaseUrl: process.env.ZC_TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: process.env.ZC_REDIS_URL ?? 'redis://127.0.0.1:6379',
  natsUrl: process.env.ZC_NATS_URL ?? 'nats://127.0.0.1:4222',
};

let infraPromise: Promise<Infra> | undefined;

export const CONTAINERS_NEED_DOCKER =
  'ZC_TEST_INFRA=containers needs Node 22 or newer (testcontainers) and a Docker engine that answers `docker info`; ' +
  'use ZC_TEST_INFRA=local with PostgreSQL, Redis and NATS (JetStream) on 127.0.0.1, or auto';

async function dockerAnswers(): Promise<boolean> {
  try {
    await promisify(execFile)('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 3000 });
    return true;
  } catch {
    return false;
  }
}

async function containerInfra(): Promise<Infra> {
  // Loaded only on this path: a machine without Docker never touches testcontainers.
  const tc = (await import('testcontainers')) as typeof import('testcontainers');
  const [pgC, redisC, natsC] = await Promise.all([
    new tc.GenericContainer('postgres:16').withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' }).withExposedPorts(5432).withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2)).start(),
    new tc.GenericContainer('redis:7').withExposedPorts(6379).start(),
    new tc.GenericContainer('nats:2.10').withCommand(['-js']).withExposedPorts(4222).start(),
  ]);
  return {
    adminDatabaseUrl: `postgres://postgres@${pgC.getHost()}:${pgC.getMappedPort(5432)}/postgres`,
    redisUrl: `redis://${redisC.getHost()}:${redisC.getMappedPort(6379)}`,
    natsUrl: `nats://${natsC.getHost()}:${natsC.getMappedPort(4222)}`,
  };
}

export function testInfra(): Promise<Infra> {
  infraPromise ??= (async () => {
    const mode = process.env.ZC_TEST_INFRA ?? 'auto';
    if (mode === 'local') return LOCAL;
    if (mode === 'containers') {
      // Asked for explicitly: no Docker engine is a clear error, not testcontainers' own
      // (a socket path or an undici stack, depending on the Node version).
      if (Number(process.versions.node.split('.')[0]) < 22 || !(await dockerAnswers())) throw new Error(CONTAINERS_NEED_DOCKER);
      return containerInfra();
    }
    if (mode === 'auto' && Number(process.versions.node.split('.')[0]) >= 22 && (await dockerAnswers())) return containerInfra();
    if (mode !== 'auto') throw new Error(`ZC_TEST_INFRA must be local, containers or auto, got '${mode}'`);
    return LOCAL;
  })();
  return infraPromise;
}

/** A fresh database and prefixes for one test file; dropped when `t` ends. */
export async function testEnv(t: Teardownable): Promise<TestEnv> {
  const infra = await testInfra();
  const id = randomBytes(5).toString('hex');
  const prefix = `t${id}`;
  const dbName = `zc_test_${id}`;
  const admin = new pg.Client({ connectionString: infra.adminDatabaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const url = new URL(infra.adminDatabaseUrl);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  t.teardown(async () => {
    await cleanup(infra, dbName, prefix).catch((e) => console.error('test cleanup failed', e));
  });
  return {
    databaseUrl,
    prefix,
    infra,
    config: {
      databaseUrl,
      redisUrl: infra.redisUrl,
      natsUrl: infra.natsUrl,
      subjectPrefix: prefix,
      redisPrefix: prefix,
      adminPort: 0,
      logLevel: process.env.LOG_LEVEL ?? 'silent',
      secretKey: randomBytes(32).toString('hex'),
      // Most tests assert exact sets of messages and users; those about new users' welcome
      // (and the real-client runs) turn it back on through startSystem's `config`.
      welcomeMessages: false,
      // Likewise the new realm's "general" stream: tests count a realm's streams and subscriptions.
      newRealmStreams: false,
    },
  };
}

async function cleanup(infra: Infra, dbName: string, prefix: string): Promise<void> {
  const admin = new pg.Client({ connectionString: infra.adminDatabaseUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
  const nc = await connect({ servers: infra.natsUrl });
  const jsm = await jetstreamManager(nc);
  for await (const name of jsm.streams.names()) {
    if (name.startsWith(`${prefix.toUpperCase()}_`)) await jsm.streams.delete(name).catch(() => undefined);
  }
  await nc.close();
  const redis = new Redis(infra.redisUrl);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
}

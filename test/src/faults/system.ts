/**
 * Boots what the fault suite and the soak test run against: their own PostgreSQL, Redis and
 * NATS (infra.ts), the services as supervised processes (cluster.ts), a realm with a sender
 * and a receiver subscribed to one stream, senders and long-polling clients (load.ts).
 */
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doCreateRealm, doCreateUser, makeDeps } from '@zc/users/manage';
import { Cluster, type Service } from './cluster.js';
import { startInfra, type Infra } from './infra.js';
import { Http, Poller, Senders, Statuses, type Account } from './load.js';

export const STREAM = 'faults';
/** Fixed heartbeat of parked polls (their gateway answers a quiet poll after it, with a heartbeat event). */
export const HEARTBEAT_MS = 10_000;

export interface FaultSystem {
  infra: Infra;
  cluster: Cluster;
  http: Http;
  statuses: Statuses;
  senders: Senders;
  pollers: Poller[];
  sender: Account;
  receiver: Account;
  /** Queries the suite's own database. */
  db: pg.Pool;
  logFile: string;
  stop(): Promise<void>;
}

export async function bootSystem(o: { replicas: Partial<Record<Service, number>>; senders: number; pollers: number; sendPauseMs: number }): Promise<FaultSystem> {
  const infra = await startInfra();
  const cleanup: Array<() => Promise<unknown>> = [() => infra.remove()];
  try {
    const admin = new pg.Client({ connectionString: infra.pg.adminUrl });
    await admin.connect();
    await admin.query('CREATE DATABASE zc_faults');
    await admin.end();
    const env = {
      ZC_DATABASE_URL: infra.pg.url,
      ZC_REDIS_URL: infra.redis.url,
      ZC_NATS_URL: infra.nats.url,
      ZC_SUBJECT_PREFIX: 'zcfaults',
      ZC_REDIS_PREFIX: 'zcfaults',
      ZC_RATE_LIMIT_PER_MINUTE: '0',
      ZC_MAX_CONCURRENT_REQUESTS_PER_USER: '0',
      ZC_RATE_LIMIT_PER_IP_PER_MINUTE: '0',
      ZC_HEARTBEAT_MS: String(HEARTBEAT_MS),
      ZC_EXTERNAL_PORT: '80',
      // The checks count every message a queue receives against what was sent; no greetings.
      ZC_WELCOME_MESSAGES: 'false',
      // And no "general" stream whose subscriptions and notices they would have to count.
      ZC_NEW_REALM_STREAMS: 'false',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      OTEL_SDK_DISABLED: 'true',
    };
    const logFile = path.join(os.tmpdir(), `zc-faults-services-${process.pid}.log`);
    const cluster = await Cluster.start(env, o.replicas, logFile);
    cleanup.unshift(() => cluster.stop());
    await cluster.waitGateways();

    const db = createPool(infra.pg.url, { max: 2 });
    cleanup.unshift(() => db.end());
    const config = loadConfig({ databaseUrl: infra.pg.url, redisUrl: infra.redis.url, natsUrl: infra.nats.url, subjectPrefix: 'zcfaults', welcomeMessages: false, newRealmStreams: false });
    const deps = makeDeps({ pool: db, config, log: createLogger({ service: 'faults', level: 'silent' }) });
    const created = await doCreateRealm(deps, { name: 'Faults', subdomain: '', owner: { email: 'iago@faults.test', password: 'pw-faults-1', full_name: 'Iago' } });
    const sender: Account = { email: 'iago@faults.test', api_key: created.apiKey };
    const other = await doCreateUser(deps, created.realm, { email: 'othello@faults.test', password: 'pw-faults-2', full_name: 'Othello', role: 400 });
    const receiver: Account = { email: 'othello@faults.test', api_key: other.apiKey };

    const statuses = new Statuses();
    const http = new Http(cluster.gatewayUrls, statuses);
    for (const a of [sender, receiver]) {
      for (let i = 0; ; i++) {
        const r = await http.call(a, 'POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: STREAM }]) });
        if (r.status === 200) break;
        if (i > 40) throw new Error(`subscribing failed: ${r.status} ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 250));
      }
    }
    // The messages service learns of the subscriptions through events: wait until a send works.
    const senders = new Senders(http, sender, STREAM, o.senders, o.sendPauseMs);
    for (let i = 0; i < 80; i++) {
      const r = await http.call(sender, 'POST', '/messages', { type: 'stream', to: STREAM, topic: 'setup', content: 'setup' });
      if (r.status === 200) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const pollers = Array.from({ length: o.pollers }, () => new Poller(http, receiver, HEARTBEAT_MS + 15_000));
    await Promise.all(pollers.map((p) => p.start()));
    cleanup.unshift(() => Promise.all(pollers.map((p) => p.stop())));
    statuses.reset();
    // Interrupted (Ctrl-C, a CI timeout): remove what was started rather than leave a
    // PostgreSQL cluster, Redis, NATS and a dozen services running without their parent.
    const interrupted = (signal: NodeJS.Signals) => {
      process.stderr.write(`[faults] ${signal}: stopping the services and removing PostgreSQL, Redis and NATS\n`);
      void (async () => {
        for (const f of cleanup) await f().catch(() => undefined);
        process.exit(130);
      })();
    };
    process.once('SIGINT', interrupted);
    process.once('SIGTERM', interrupted);
    return {
      infra,
      cluster,
      http,
      statuses,
      senders,
      pollers,
      sender,
      receiver,
      db,
      logFile,
      async stop() {
        for (const f of cleanup) await f().catch(() => undefined);
      },
    };
  } catch (e) {
    for (const f of cleanup) await f().catch(() => undefined);
    throw e;
  }
}

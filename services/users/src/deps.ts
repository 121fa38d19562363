import { realmUrl, type SharedConfig } from '@zc/shared/config';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';
import type { Bus } from '@zc/shared/bus';
import type { Redis } from '@zc/shared/redis';
import { ApiKeyVault } from './lib/credentials.js';
import { PresenceReader, PresenceStore } from '@zc/shared/presence';
import type { RealmRow } from './store/realm-store.js';

/** Everything the users service's actions and queries need, built once at start. */
export interface UsersDeps {
  pool: Pool;
  config: SharedConfig;
  vault: ApiKeyVault;
  log: Logger;
  /** Absent for the management CLI, which does not throttle. */
  redis?: Redis;
  /** Publishes client events that are not tied to a transaction (presence), asks other services (e.g. whether a stream exists); absent for the CLI. */
  bus?: Bus;
  /** Presence in Redis; absent for the management CLI (no Redis). */
  presence?: PresenceStore;
  /** This process's copy of realms' presence, brought up to date on each read (whole-realm reads). */
  presenceReader?: PresenceReader;
  /** When this process started (seconds), /register's `server_generation`. */
  serverGeneration: number;
}

export function makeDeps(p: Omit<UsersDeps, 'vault' | 'presence' | 'presenceReader' | 'serverGeneration'>): UsersDeps {
  const presence = p.redis ? new PresenceStore(p.redis, p.config.redisPrefix) : undefined;
  return {
    ...p,
    vault: new ApiKeyVault(p.config.secretKey),
    serverGeneration: Math.floor(Date.now() / 1000),
    ...(presence ? { presence, presenceReader: new PresenceReader(presence) } : {}),
  };
}

export function realmUrlOf(deps: UsersDeps, realm: Pick<RealmRow, 'subdomain'>): string {
  return realmUrl(deps.config, realm.subdomain);
}

/** Host part of the realm URL, used in fake display emails. */
export function realmHostOf(deps: UsersDeps, realm: Pick<RealmRow, 'subdomain'>): string {
  return new URL(realmUrlOf(deps, realm)).hostname;
}

/**
 * After a committed change that takes credentials or rights away (or changes what the
 * gateway's cached actor says: role, name, email), the users service gives the user or realm
 * a new credential token before answering (shared/src/redis/credentials.ts). Every gateway
 * replica compares tokens on each request, so the change holds everywhere once the call
 * answers; the NATS invalidation event only frees memory sooner.
 */
import { revokeCachedCredentials } from '@zc/shared/redis';
import type { UsersDeps } from '../deps.js';

/** Must run after the transaction commits: a replica re-checking earlier would cache the old row again. */
export async function revokeCredentialsOf(deps: UsersDeps, targets: { userIds?: number[]; realmIds?: number[] }): Promise<void> {
  if (!deps.redis) return;
  await revokeCachedCredentials(deps.redis, deps.config.redisPrefix, targets);
}

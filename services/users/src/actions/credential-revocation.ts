/**
 * After a committed change that takes credentials or rights away (or changes what the
 * gateway's cached actor says: role, name, email), the users service gives the user or realm
 * a new credential token before answering (shared/src/redis/credentials.ts). Every gateway
 * replica compares tokens on each request, so the change holds everywhere once the call
 * answers; the NATS invalidation event only frees memory sooner.
 */
import { eventsRpc } from '@zc/shared/contracts';
import { revokeCachedCredentials } from '@zc/shared/redis';
import type { UsersDeps } from '../deps.js';

/** Must run after the transaction commits: a replica re-checking earlier would cache the old row again. */
export async function revokeCredentialsOf(deps: UsersDeps, targets: { userIds?: number[]; realmIds?: number[] }): Promise<void> {
  if (!deps.redis) return;
  await revokeCachedCredentials(deps.redis, deps.config.redisPrefix, targets);
}

/**
 * After a committed change that takes reading rights away, and before answering: the events
 * service drops the user's queues that would keep being fed what the user may no longer read
 * (a deactivated user's queues; a new guest's all_public_streams queues), ending their parked
 * polls. Best effort once committed: if the events service cannot be reached, the change
 * stands and the poll path still refuses a guest's all_public_streams queue on its own; only
 * a poll parked before the change keeps listening until its heartbeat.
 */
export async function dropEventQueuesOf(deps: UsersDeps, realmId: number, userId: number, scope: 'all' | 'all_public_streams'): Promise<void> {
  if (!deps.bus) return;
  try {
    await deps.bus.request(eventsRpc.dropUserQueues, { realm_id: realmId, user_id: userId, scope }, { timeoutMs: DROP_QUEUES_TIMEOUT_MS });
  } catch (err) {
    deps.log.warn({ err, user_id: userId, scope }, 'could not drop the event queues of a user who lost reading rights');
  }
}

const DROP_QUEUES_TIMEOUT_MS = 2_000;

/**
 * Where the event queues live in Redis (under the configured prefix):
 *
 *   evq:{<queue_id>}:meta     hash: owner, filter settings, snapshots, next id, acknowledged id,
 *                             last applied JetStream seq, epoch, poll generation, parker
 *   evq:{<queue_id>}          stream: the queue's unacknowledged events, entry id `<event id>-1`
 *   evq:user:<user_id>        set: the user's queue ids (an index; dead ids are pruned lazily)
 *   evq:realm:<realm_id>:public  set: queues registered with all_public_streams
 *   evq:index-generation      string: random, renewed whenever an index changes (copies of the
 *                             indexes are good while it stays the same)
 *   evq:registry              hash: epoch (random, new whenever the dataset was lost) and the
 *                             delivery cursor (last JetStream seq applied to every queue)
 *   evq:leader                string: the token of the events replica appending events
 *   evq:leader:term           integer: the leadership term, incremented by each new leader
 *
 * The events service writes them (register, append, expiry, leadership); the gateway reads
 * and acknowledges them (GET /events). The hash tag keeps one queue's two keys in one cluster
 * slot, so the per-queue scripts work on Redis Cluster; the indexes and the registry are
 * separate single-key operations.
 */
import { redisKey } from '../redis/index.js';

export const queueMetaKey = (prefix: string, queueId: string): string => redisKey(prefix, 'evq', `{${queueId}}`, 'meta');
export const queueStreamKey = (prefix: string, queueId: string): string => redisKey(prefix, 'evq', `{${queueId}}`);
/** KEYS of every per-queue script: the meta hash, then the event stream. */
export const queueKeys = (prefix: string, queueId: string): [string, string] => [queueMetaKey(prefix, queueId), queueStreamKey(prefix, queueId)];
/** SCAN pattern matching every queue's meta key. */
export const queueMetaPattern = (prefix: string): string => `${redisKey(prefix, 'evq', '{')}*}:meta`;
export const userQueuesKey = (prefix: string, userId: number): string => redisKey(prefix, 'evq', 'user', userId);
export const realmPublicQueuesKey = (prefix: string, realmId: number): string => redisKey(prefix, 'evq', 'realm', realmId, 'public');
export const indexGenerationKey = (prefix: string): string => redisKey(prefix, 'evq', 'index-generation');
export const registryKey = (prefix: string): string => redisKey(prefix, 'evq', 'registry');
export const leaderKey = (prefix: string): string => redisKey(prefix, 'evq', 'leader');
export const leaderTermKey = (prefix: string): string => redisKey(prefix, 'evq', 'leader', 'term');

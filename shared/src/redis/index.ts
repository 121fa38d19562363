/** Redis connections and key naming (`<prefix>:<purpose>:...`). */
import { Redis } from 'ioredis';

export { Redis };

export function createRedis(url: string, opts: { lazy?: boolean } = {}): Redis {
  return new Redis(url, { lazyConnect: opts.lazy ?? false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
}

/** Builds a key under the configured prefix. */
export function redisKey(prefix: string, ...parts: Array<string | number>): string {
  return [prefix, ...parts].join(':');
}

export { RedisBatch, resultValue, type BatchResults } from './batch.js';
export { CREDENTIAL_TOKEN_TTL_MS, credentialTokenKey, revokeCachedCredentials, type CredentialScope } from './credentials.js';

/**
 * Credential versions: the token that lets every gateway replica notice, on the request
 * itself, that a user's (or a whole realm's) credentials changed. The users service writes a
 * new random token after committing a change that takes credentials or rights away (new API
 * key, deactivation, role or realm change) and before it answers; the gateway reads the
 * tokens of the user and realm on every authenticated request and re-checks the key with the
 * users service when either differs from the one it saw when it cached the key. So an old key
 * is refused by every replica as soon as the call that revoked it has answered, whatever
 * happens to the NATS invalidation event.
 *
 * Tokens are random rather than counters, so a key that expired and was written again can
 * never come back to a value some replica cached. They outlive any cache entry by far.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** How long a token is kept; far longer than any gateway's credential cache TTL. */
export const CREDENTIAL_TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

export type CredentialScope = 'user' | 'realm';

/** Redis key of the credential token of one user or realm. */
export function credentialTokenKey(prefix: string, scope: CredentialScope, id: number): string {
  return `${prefix}:credver:${scope}:${id}`;
}

/** Gives the users and realms new tokens; every cached credential of theirs is re-checked on its next use. */
export async function revokeCachedCredentials(
  redis: Redis,
  prefix: string,
  targets: { userIds?: readonly number[]; realmIds?: readonly number[] },
): Promise<void> {
  const keys = [
    ...(targets.userIds ?? []).map((id) => credentialTokenKey(prefix, 'user', id)),
    ...(targets.realmIds ?? []).map((id) => credentialTokenKey(prefix, 'realm', id)),
  ];
  if (keys.length === 0) return;
  const pipeline = redis.pipeline();
  for (const k of keys) pipeline.set(k, randomBytes(9).toString('base64'), 'PX', CREDENTIAL_TOKEN_TTL_MS);
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0] as Error;
}

/** Credential checks: Basic auth for the gateway and password login (fetch_api_key). */
import { AppError } from '@zc/shared/errors';
import type { Actor } from '@zc/shared/contracts';
import { credentialTokenKey, redisKey } from '@zc/shared/redis';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { isWellFormedApiKey, verifyPassword } from '../lib/credentials.js';
import { displayEmail } from '../lib/user-view.js';
import { realmStore, type RealmRow } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';

const invalidApiKey = () => new AppError('INVALID_API_KEY', 'Invalid API key', 401);
const malformedApiKey = () => new AppError('INVALID_API_KEY', 'Malformed API key', 401);
const userDeactivated = () => new AppError('USER_DEACTIVATED', 'Account is deactivated', 401);
const realmDeactivated = () => new AppError('REALM_DEACTIVATED', 'This organization has been deactivated', 401);
const badCredentials = () => new AppError('BAD_REQUEST', 'Your username or password is incorrect', 401);

/** Zulip's authenticate_by_username limit: 5 failed logins per username per 30 minutes. */
export const LOGIN_FAILURE_LIMIT = { count: 5, windowSeconds: 1800 };

/** Checks an email + API key against the realm the request's host names; returns the actor and its realm. */
export async function authenticate(
  deps: UsersDeps,
  r: { realm_subdomain: string; email: string; api_key: string },
): Promise<{ actor: Actor; realm: RealmRow; tokens: CredentialTokens }> {
  if (!isWellFormedApiKey(r.api_key)) throw malformedApiKey();
  const keyHash = deps.vault.lookupHash(r.api_key);
  const found = await userStore.findByApiKeyHash(deps.pool, keyHash);
  if (!found) throw invalidApiKey();
  // The tokens are read before the row the answer is built from: a revocation committed after
  // this read changes a token the gateway will compare, one committed before it shows in the row.
  const tokens = await credentialTokensOf(deps, found.id, found.realm_id);
  const user = await userStore.findByApiKeyHash(deps.pool, keyHash);
  if (!user) throw invalidApiKey();
  const realm = await realmStore.findById(deps.pool, user.realm_id);
  // A key from another realm is as good as no key here (operations.md 31: cross-realm keys).
  if (!realm || realm.subdomain !== r.realm_subdomain) throw invalidApiKey();
  const email = r.email.toLowerCase();
  if (email !== user.delivery_email.toLowerCase() && email !== displayEmail(user, realm, realmHostOf(deps, realm)).toLowerCase()) {
    throw invalidApiKey();
  }
  if (realm.deactivated) throw realmDeactivated();
  if (!user.is_active) throw userDeactivated();
  const actor: Actor = {
    realm_id: realm.id,
    user_id: user.id,
    role: user.role,
    email: displayEmail(user, realm, realmHostOf(deps, realm)),
    full_name: user.full_name,
    is_bot: user.is_bot,
    realm_revision: realm.revision,
  };
  return { actor, realm, tokens };
}

export interface CredentialTokens {
  user: string | null;
  realm: string | null;
}

async function credentialTokensOf(deps: UsersDeps, userId: number, realmId: number): Promise<CredentialTokens> {
  if (!deps.redis) return { user: null, realm: null };
  const prefix = deps.config.redisPrefix;
  const [user = null, realm = null] = await deps.redis.mget(credentialTokenKey(prefix, 'user', userId), credentialTokenKey(prefix, 'realm', realmId));
  return { user, realm };
}

/**
 * POST /fetch_api_key; repeated failures for one username are refused for a while. Each
 * attempt takes its slot in the failure count before the password is checked (and gives it
 * back on success), so parallel attempts cannot all pass a check made before any of them
 * failed: thirty at once against a limit of five get five password checks.
 */
export async function fetchApiKey(
  deps: UsersDeps,
  r: { realm_subdomain: string; username: string; password: string },
): Promise<{ api_key: string; email: string; user_id: number }> {
  const throttleKey = redisKey(deps.config.redisPrefix, 'login-failures', r.realm_subdomain, r.username.toLowerCase());
  if (deps.redis) {
    const res = await deps.redis.multi().incr(throttleKey).expire(throttleKey, LOGIN_FAILURE_LIMIT.windowSeconds, 'NX').ttl(throttleKey).exec();
    const attempts = Number(res?.[0]?.[1]);
    if (!(attempts <= LOGIN_FAILURE_LIMIT.count)) {
      throw new AppError('RATE_LIMIT_HIT', "You're making too many attempts to sign in. Try again later.", 429, {
        'retry-after': Math.max(1, Number(res?.[2]?.[1])),
      });
    }
  }
  const realm = await realmStore.findBySubdomain(deps.pool, r.realm_subdomain);
  const user = realm ? await userStore.findByDeliveryEmail(deps.pool, realm.id, r.username) : undefined;
  // Verify even when the user is unknown, so the answer's timing does not reveal which emails exist.
  const ok = await verifyPassword(r.password, user?.password_hash ?? 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
  // A failure keeps the slot it took.
  if (!realm || !user || !ok) throw badCredentials();
  if (deps.redis) await deps.redis.del(throttleKey);
  if (realm.deactivated) throw realmDeactivated();
  if (!user.is_active) throw userDeactivated();
  return { api_key: deps.vault.decrypt(user.api_key_enc), email: user.delivery_email, user_id: user.id };
}

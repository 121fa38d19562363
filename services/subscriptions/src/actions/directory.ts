/**
 * What this service reads of its copy of the directory (@zc/shared/directory, kept in the
 * `subscriptions` schema): the realm as the stream rules see it, and the principals a
 * request names.
 */
import type { Actor } from '@zc/shared/contracts';
import type { DirectoryRealm, DirectoryUser } from '@zc/shared/directory';
import { realmSettings, type RealmSettings } from '@zc/shared/policy';
import { principalError } from '../lib/errors.js';
import type { SubscriptionsDeps } from '../deps.js';

export interface Realm {
  id: number;
  url: string;
  /** Host of the realm URL, used in stream email addresses. */
  host: string;
  settings: RealmSettings;
}

export function toRealm(r: DirectoryRealm): Realm {
  return { id: r.id, url: r.url, host: new URL(r.url).hostname, settings: realmSettings(r.settings) };
}

/** The realm from the directory, loading the whole realm from the users service the first time. */
export async function ensureRealm(deps: SubscriptionsDeps, realmId: number): Promise<Realm> {
  return toRealm(await deps.directory.ensureRealm(realmId));
}

/** The realm as a request's actor may expect it, its policies as new as the request (Directory.realmFor). */
export async function realmFor(deps: SubscriptionsDeps, actor: Pick<Actor, 'realm_id' | 'realm_revision'>): Promise<Realm> {
  return toRealm(await deps.directory.realmFor(actor));
}

/**
 * The active users that `principals` name (spec 4.6), or Zulip's principal error for the
 * first one that names nobody, or a deactivated user.
 */
export async function activePrincipals(deps: SubscriptionsDeps, realmId: number, principals: ReadonlyArray<number | string>): Promise<DirectoryUser[]> {
  const { found, missing } = await deps.directory.resolveUsers(deps.pool, realmId, principals);
  const inactive = (k: number | string) => found.some((u) => !u.is_active && (u.id === k || (typeof k === 'string' && u.email.toLowerCase() === k.toLowerCase())));
  const refused = missing[0] ?? principals.find(inactive);
  if (refused !== undefined) throw principalError(refused);
  return found;
}

/**
 * What the legacy presence answer (keyed by email, asked by zulip-terminal every minute) needs
 * to know of people, kept in memory: each listed user's display email, as JSON text. Asking
 * PostgreSQL for a 1,000-person realm's emails on every call cost more than the rest of the
 * answer.
 *
 * The copy is good while the realm's people token in Redis is the one it was read under. The
 * users service gives the realm a new token after committing any change of what the copy holds
 * (an address, a deactivation or reactivation, the realm's settings: `email_address_visibility`,
 * the host), before answering, so every replica's next read sees the change. A user the copy
 * does not know yet (a new user's first ping) is read on its own. Since a token is read before
 * the rows it guards, a change committed meanwhile is caught by the next read.
 */
import { randomBytes } from 'node:crypto';
import { redisKey } from '@zc/shared/redis';
import { realmHostOf, type UsersDeps } from '../deps.js';
import { displayEmail } from '../lib/user-view.js';
import { presencePeopleStore } from '../store/presence-people-store.js';
import { realmStore } from '../store/realm-store.js';

/** A copy older than this is read again whatever its token says (a change made without Redis, e.g. the CLI offline). */
const MAX_AGE_MS = 10 * 60 * 1000;
/** Realms kept at most; past it the least recently read are dropped. */
const MAX_REALMS = 500;
const TOKEN_TTL_MS = 7 * 24 * 3600 * 1000;

interface RealmPeople {
  token: string;
  loadedAt: number;
  /** user id -> display email as JSON text (quoted), or null when the user is not listed (inactive, bot, unknown). */
  emails: Map<number, string | null>;
}

const peopleTokenKey = (deps: UsersDeps, realmId: number) => redisKey(deps.config.redisPrefix, 'users', 'presence-people', realmId);

/** The realm's people token ('' when it has none yet, or without Redis). */
export async function peopleTokenOf(deps: UsersDeps, realmId: number): Promise<string> {
  if (!deps.redis) return '';
  return (await deps.redis.get(peopleTokenKey(deps, realmId))) ?? '';
}

/**
 * After a committed change of a listed user's email or state, or of the realm's settings, and
 * before answering: every replica's copy of the realm's people is read again.
 */
export async function presencePeopleChanged(deps: UsersDeps, realmId: number): Promise<void> {
  if (!deps.redis) return;
  await deps.redis.set(peopleTokenKey(deps, realmId), randomBytes(9).toString('base64'), 'PX', TOKEN_TTL_MS);
}

// One per deps (a process has one; tests may build several).
const perDeps = new WeakMap<UsersDeps, PresencePeopleCache>();

export function presencePeopleOf(deps: UsersDeps): PresencePeopleCache {
  let c = perDeps.get(deps);
  if (!c) perDeps.set(deps, (c = new PresencePeopleCache(deps)));
  return c;
}

export class PresencePeopleCache {
  private readonly realms = new Map<number, RealmPeople>();

  constructor(private readonly deps: UsersDeps) {}

  /**
   * The display emails (JSON text, null when not listed) of `userIds` in the realm, under
   * `token` (read from peopleTokenOf before this call).
   */
  async emailsOf(realmId: number, token: string, userIds: readonly number[], nowMs = Date.now()): Promise<ReadonlyMap<number, string | null>> {
    let copy = this.realms.get(realmId);
    if (!copy || copy.token !== token || nowMs - copy.loadedAt > MAX_AGE_MS) {
      copy = { token, loadedAt: nowMs, emails: new Map() };
    }
    const missing = userIds.filter((id) => !copy.emails.has(id));
    if (missing.length > 0) await this.fill(realmId, copy, missing);
    this.realms.delete(realmId);
    this.realms.set(realmId, copy);
    if (this.realms.size > MAX_REALMS) {
      const oldest = this.realms.keys().next().value;
      if (oldest !== undefined) this.realms.delete(oldest);
    }
    return copy.emails;
  }

  private async fill(realmId: number, copy: RealmPeople, ids: readonly number[]): Promise<void> {
    const realm = await realmStore.findById(this.deps.pool, realmId);
    if (!realm) {
      for (const id of ids) copy.emails.set(id, null);
      return;
    }
    const host = realmHostOf(this.deps, realm);
    const found = new Map((await presencePeopleStore.listByIds(this.deps.pool, realmId, ids)).map((p) => [p.id, p]));
    for (const id of ids) {
      const p = found.get(id);
      copy.emails.set(id, p && p.is_active && !p.is_bot ? JSON.stringify(displayEmail(p, realm, host)) : null);
    }
  }
}

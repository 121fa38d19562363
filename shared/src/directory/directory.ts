/**
 * A service's own copy of the users service's directory (realms and users), kept in its own
 * schema (DESIGN.md: a service reads only its own schema): fed by the users service's domain
 * events, loaded whole from a snapshot the first time a realm is used, and completed by
 * asking the users service about a user the copy does not know yet (its events are still on
 * their way), so a request never fails on a lagging copy.
 */
import type { Bus } from '../bus/index.js';
import { userGroupEvents, userGroups, type UserGroupRecord } from '../contracts/user-groups.js';
import type { Actor } from '../contracts/common.js';
import { users, usersEvents, type RealmRecord, type UserRecord } from '../contracts/users.js';
import { transaction, type Pool, type Queryable } from '../db/index.js';
import { badRequest } from '../errors/index.js';
import { allMembers, isAdminRole, isGuestRole, realmSettings, withSystemGroups, type GroupShape } from '../policy/index.js';
import { directoryStore, type DirectoryRealm, type DirectoryStore, type DirectoryUser } from './store.js';

/** The users service's events that change the directory. */
export const DIRECTORY_EVENTS = [usersEvents.realmCreated, usersEvents.realmUpdated, usersEvents.userCreated, usersEvents.userUpdated, userGroupEvents.changed] as const;

type RealmSubject = typeof usersEvents.realmCreated.subject | typeof usersEvents.realmUpdated.subject;
type UserSubject = typeof usersEvents.userCreated.subject | typeof usersEvents.userUpdated.subject;

/** One directory event as a consumer receives it: `[subject, payload, ...meta]`. */
export type DirectoryEvent =
  | readonly [RealmSubject, RealmRecord, ...unknown[]]
  | readonly [UserSubject, UserRecord, ...unknown[]]
  | readonly [typeof userGroupEvents.changed.subject, UserGroupRecord, ...unknown[]];

const SUBJECTS = new Set<string>(DIRECTORY_EVENTS.map((c) => c.subject));

/** Whether a consumer's `[subject, payload, meta]` is a directory event (narrows its type). */
export function isDirectoryEvent<E extends readonly [string, unknown, ...unknown[]]>(e: E): e is Extract<E, DirectoryEvent> {
  return SUBJECTS.has(e[0]);
}

export interface DirectoryOptions {
  /** The using service's schema (its migrations include DIRECTORY_MIGRATIONS). */
  schema: string;
  pool: Pool;
  bus: Bus;
  /**
   * Runs first in every transaction that writes the directory, with the realms written: a
   * service that versions its read models (messages) bumps the version there.
   */
  beforeWrite?: (tx: Queryable, realmIds: readonly number[]) => Promise<void>;
}

export interface ResolvedUsers {
  found: DirectoryUser[];
  /** Ids and emails that name no user of the realm, in the order asked. */
  missing: Array<number | string>;
}

/** The realm's active users by kind (system bots excluded), for event recipients. */
export interface RealmPeople {
  everyone: number[];
  members: number[];
  admins: number[];
}

function userOf(u: UserRecord): DirectoryUser {
  return {
    id: u.user_id,
    realm_id: u.realm_id,
    email: u.email,
    delivery_email: u.delivery_email,
    full_name: u.full_name,
    role: u.role,
    is_active: u.is_active,
    is_bot: u.is_bot,
    is_system_bot: u.is_system_bot === true,
    bot_owner_id: u.bot_owner_id,
    avatar_source: u.avatar_source,
    avatar_version: u.avatar_version,
    date_joined: new Date(u.date_joined),
  };
}

/** Users keyed by id and by lower-cased email (display, and real if asked), the ways a request names a user. */
class UserIndex {
  private readonly byKey = new Map<number | string, DirectoryUser>();
  constructor(private readonly deliveryEmails: boolean) {}
  add(users: readonly DirectoryUser[]): void {
    for (const u of users) {
      this.byKey.set(u.id, u);
      this.byKey.set(u.email.toLowerCase(), u);
      if (this.deliveryEmails) this.byKey.set(u.delivery_email.toLowerCase(), u);
    }
  }
  get(key: number | string): DirectoryUser | undefined {
    return this.byKey.get(typeof key === 'number' ? key : key.toLowerCase());
  }
}

export class Directory {
  readonly store: DirectoryStore;

  constructor(private readonly opts: DirectoryOptions) {
    this.store = directoryStore(opts.schema);
  }

  /** Runs `write` in a transaction (or the caller's), after the beforeWrite hook. */
  private async write(q: Queryable | undefined, realmIds: readonly number[], write: (tx: Queryable) => Promise<void>): Promise<void> {
    const hook = this.opts.beforeWrite;
    const run = async (tx: Queryable) => {
      if (hook) await hook(tx, [...new Set(realmIds)].sort((a, b) => a - b));
      await write(tx);
    };
    if (q) await run(q);
    else if (hook) await transaction(this.opts.pool, run);
    else await run(this.opts.pool);
  }

  /**
   * The realm as the request's actor may expect it: a copy older than the revision the actor
   * was authenticated at (a PATCH /realm answered before its event got here) is fetched
   * again from the users service, so a policy change holds from the next request on.
   */
  async realmFor(actor: Pick<Actor, 'realm_id' | 'realm_revision'>): Promise<DirectoryRealm> {
    return this.ensureRealm(actor.realm_id, actor.realm_revision);
  }

  /** Whether a copy of the realm read elsewhere (e.g. with a service's own query) is as new as the actor's. */
  static isCurrentFor(realm: Pick<DirectoryRealm, 'revision'>, actor: Pick<Actor, 'realm_revision'>): boolean {
    return realm.revision >= (actor.realm_revision ?? 0);
  }

  /**
   * The realm, loading it with all its users from the users service the first time, and
   * the realm alone again when the copy is older than `atLeastRevision`.
   */
  async ensureRealm(realmId: number, atLeastRevision = 0): Promise<DirectoryRealm> {
    const known = await this.store.findRealm(this.opts.pool, realmId);
    if (known && known.revision >= atLeastRevision) return known;
    if (known) {
      const { realm: r } = await this.opts.bus.request(users.realm, { realm_id: realmId });
      await this.write(undefined, [realmId], (tx) => this.store.updateRealm(tx, r).then(() => undefined));
      return { id: r.realm_id, subdomain: r.subdomain, url: r.url, settings: r.settings, deactivated: r.deactivated, revision: r.revision ?? 0 };
    }
    const [snap, { groups }] = await Promise.all([
      this.opts.bus.request(users.realmSnapshot, { realm_id: realmId }),
      this.opts.bus.request(userGroups.realmGroups, { realm_id: realmId }),
    ]);
    if (snap.realm.realm_id !== realmId) throw badRequest('Invalid realm');
    await transaction(this.opts.pool, (tx) =>
      this.write(tx, [realmId], async () => {
        await this.store.upsertUsers(tx, snap.users);
        await this.store.putGroups(tx, groups);
        await this.store.upsertRealm(tx, snap.realm);
      }),
    );
    const r = snap.realm;
    return { id: r.realm_id, subdomain: r.subdomain, url: r.url, settings: r.settings, deactivated: r.deactivated, revision: r.revision ?? 0 };
  }

  /**
   * Users of the realm named by ids or emails (display emails; real ones too with
   * `deliveryEmails`), asking the users service about any the copy lacks and keeping its answer.
   */
  async resolveUsers(q: Queryable, realmId: number, keys: ReadonlyArray<number | string>, opts: { deliveryEmails?: boolean } = {}): Promise<ResolvedUsers> {
    const ids = keys.filter((k): k is number => typeof k === 'number');
    const emails = keys.filter((k): k is string => typeof k === 'string');
    const index = new UserIndex(opts.deliveryEmails === true);
    index.add(await this.store.usersByIds(q, realmId, ids));
    index.add(await this.store.usersByEmails(q, realmId, emails, opts));
    const unknown = keys.filter((k) => !index.get(k));
    if (unknown.length > 0) {
      const reply = await this.opts.bus.request(users.resolve, {
        realm_id: realmId,
        user_ids: unknown.filter((k): k is number => typeof k === 'number'),
        emails: unknown.filter((k): k is string => typeof k === 'string'),
      });
      const fresh = reply.users.filter((u) => u.realm_id === realmId);
      await this.write(undefined, [realmId], (tx) => this.store.upsertUsers(tx, fresh));
      index.add(fresh.map(userOf));
    }
    const found = new Map<number, DirectoryUser>();
    const missing: Array<number | string> = [];
    for (const k of keys) {
      const u = index.get(k);
      if (u) found.set(u.id, u);
      else missing.push(k);
    }
    return { found: [...found.values()], missing };
  }

  /** One user the caller knows exists (usually the actor). */
  async requireUser(q: Queryable, realmId: number, userId: number): Promise<DirectoryUser> {
    const user = (await this.resolveUsers(q, realmId, [userId])).found[0];
    if (!user) throw badRequest('Invalid user');
    return user;
  }

  async realmPeople(q: Queryable, realmId: number): Promise<RealmPeople> {
    const active = await this.store.activePeers(q, realmId);
    return {
      everyone: active.map((u) => u.id),
      members: active.filter((u) => !isGuestRole(u.role)).map((u) => u.id),
      admins: active.filter((u) => isAdminRole(u.role)).map((u) => u.id),
    };
  }

  /**
   * Applies one directory event. A realm event only updates a realm already loaded from a
   * snapshot (see ensureRealm); upserts are idempotent, so redelivery does no harm.
   */
  async apply(e: DirectoryEvent): Promise<void> {
    switch (e[0]) {
      case usersEvents.realmCreated.subject:
      case usersEvents.realmUpdated.subject: {
        const r = e[1];
        await this.write(undefined, [r.realm_id], async (tx) => {
          await this.store.updateRealm(tx, r);
        });
        return;
      }
      case usersEvents.userCreated.subject:
      case usersEvents.userUpdated.subject: {
        const u = e[1];
        await this.write(undefined, [u.realm_id], (tx) => this.store.upsertUsers(tx, [u]));
        return;
      }
      case userGroupEvents.changed.subject: {
        const g = e[1];
        // Groups of a realm not loaded yet come with its snapshot.
        if (!(await this.store.findRealm(this.opts.pool, g.realm_id))) return;
        await this.write(undefined, [g.realm_id], (tx) => this.store.putGroups(tx, [g]));
        return;
      }
    }
  }

  /** The realm's groups by id, and what their members are computed from (policy/allMembers). */
  async groupContext(q: Queryable, realmId: number): Promise<{ groupsById: Map<number, GroupShape>; people: { users: Array<{ id: number; role: number; date_joined: Date }>; waitingPeriodDays: number } }> {
    const realm = await this.ensureRealm(realmId);
    // One after the other: `q` may be one client (a transaction, a snapshot read), which runs one query at a time.
    const groups = await this.store.realmGroups(q, realmId);
    const users = await this.store.activePeers(q, realmId);
    return {
      // A copy loaded before groups existed still knows the system groups.
      groupsById: withSystemGroups(realmId, groups),
      people: { users, waitingPeriodDays: realmSettings(realm.settings).waiting_period_threshold },
    };
  }

  /** Whether the user belongs to the group, directly or through its subgroups (group-based permissions). */
  async isGroupMember(q: Queryable, realmId: number, groupId: number, userId: number): Promise<boolean> {
    const { groupsById, people } = await this.groupContext(q, realmId);
    return allMembers([groupId], groupsById, people).has(userId);
  }

  /** Keeps the copy current: a durable consumer of the directory events (one per service, `durable` names it). */
  async consume(durable: string): Promise<void> {
    await this.opts.bus.consume(DIRECTORY_EVENTS, { durable }, (...e) => this.apply(e));
  }
}

/**
 * role:fullmembers is computed, not stored: a member joins it when the realm's waiting period
 * has passed since they joined (policy/isNewMember). Clients keep `realm_user_groups` from
 * user_group events, so, as Zulip does, the changes are announced: when an administrator
 * changes waiting_period_threshold (Zulip's update_users_in_full_members_system_group: those
 * who leave, then those who join) and when members pass the waiting period as time goes by
 * (Zulip's promote_new_full_members cron job; here a sweep every minute). Each realm row
 * remembers until when passing members were announced (`full_members_swept_at`), under the
 * realm's row lock, so replicas sweeping together announce each member once. That instant is
 * also the clock role:fullmembers is counted with everywhere in this service (/register, GET
 * /user_groups, role changes), so a state never holds a member whose add_members is still to come.
 */
import { Role, eventsInbox } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { isDirectSystemGroupMember, realmSettings, systemGroupId } from '@zc/shared/policy';
import type { UsersDeps } from '../deps.js';
import type { RealmRow } from '../store/realm-store.js';
import { userStore } from '../store/user-store.js';

const DAY_MS = 24 * 3600 * 1000;

/** How often each replica looks for members who passed the waiting period. */
export const FULL_MEMBER_SWEEP_MS = 60_000;

async function announceMoves(q: Queryable, realmId: number, op: 'add_members' | 'remove_members', userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await addToOutbox(q, 'users', eventsInbox.notify, {
    realm_id: realmId,
    users: await userStore.listActiveIds(q, realmId),
    event: { type: 'user_group', op, group_id: systemGroupId(realmId, 'role:fullmembers'), user_ids: userIds },
  });
}

async function setSweptAt(q: Queryable, realmId: number, at: Date): Promise<void> {
  await q.query('UPDATE users.realm SET full_members_swept_at = $2 WHERE id = $1', [realmId, at]);
}

/**
 * A changed waiting period, inside PATCH /realm's transaction (the realm row locked): who
 * leaves role:fullmembers and who joins it, from the group as last announced (the old period
 * at the sweep's clock) to the group now (the new period, now), after which the clock is now.
 * The realm's people as /register counts them (deactivated users keep their memberships).
 */
export async function doFullMembersAfterWaitingPeriodChange(q: Queryable, realm: RealmRow, before: number, after: number, now = new Date()): Promise<void> {
  const people = await userStore.listByRealm(q, realm.id);
  const was = (u: (typeof people)[number]) => isDirectSystemGroupMember('role:fullmembers', u, before, realm.full_members_swept_at);
  const is = (u: (typeof people)[number]) => isDirectSystemGroupMember('role:fullmembers', u, after, now);
  await announceMoves(q, realm.id, 'remove_members', people.filter((u) => was(u) && !is(u)).map((u) => u.id));
  await announceMoves(q, realm.id, 'add_members', people.filter((u) => !was(u) && is(u)).map((u) => u.id));
  // Those who pass the new waiting period from now on are the sweep's.
  await setSweptAt(q, realm.id, now);
}

/** Members of one realm who passed the waiting period since the last sweep (none while another holds the realm). */
async function sweepRealm(deps: Pick<UsersDeps, 'pool'>, realmId: number, now: Date): Promise<number[]> {
  return transaction(deps.pool, async (tx) => {
    const { rows } = await tx.query<{ settings: Record<string, unknown>; swept_at: Date }>(
      'SELECT settings, full_members_swept_at AS swept_at FROM users.realm WHERE id = $1 AND NOT deactivated FOR UPDATE SKIP LOCKED',
      [realmId],
    );
    const realm = rows[0];
    // Locked: a PATCH /realm or another replica's sweep has it; the next sweep takes it up.
    if (!realm) return [];
    const days = realmSettings(realm.settings).waiting_period_threshold;
    let passed: number[] = [];
    if (realm.swept_at < now && days > 0) {
      const { rows: members } = await tx.query<{ id: number }>(
        `SELECT id FROM users.user_profile
          WHERE realm_id = $1 AND role = $2 AND NOT is_system_bot
            AND date_joined + $3 * interval '1 millisecond' > $4 AND date_joined + $3 * interval '1 millisecond' <= $5
          ORDER BY id`,
        [realmId, Role.MEMBER, days * DAY_MS, realm.swept_at, now],
      );
      passed = members.map((m) => Number(m.id));
      await announceMoves(tx, realmId, 'add_members', passed);
    }
    if (realm.swept_at < now) await setSweptAt(tx, realmId, now);
    return passed;
  });
}

/** Announces every realm's members who passed the waiting period since the last sweep (as of `now`). */
export async function doAnnounceNewFullMembers(deps: Pick<UsersDeps, 'pool'>, now = new Date()): Promise<Record<number, number[]>> {
  const { rows } = await deps.pool.query<{ id: number }>('SELECT id FROM users.realm WHERE NOT deactivated ORDER BY id');
  const out: Record<number, number[]> = {};
  for (const { id } of rows) {
    const passed = await sweepRealm(deps, Number(id), now);
    if (passed.length > 0) out[Number(id)] = passed;
  }
  return out;
}

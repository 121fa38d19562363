/**
 * Muted users (Zulip's MutedUser, FL 48). The users service owns the list; the messages
 * service keeps a read model of it, because a muted sender's messages arrive already read.
 */
import { eventsInbox, messagesRpc, usersEvents, type Actor, type MutedUserChange } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import { addToOutbox } from '@zc/shared/outbox';
import type { UsersDeps } from '../deps.js';
import { mutedUserStore, type MutedUserRow } from '../store/muted-user-store.js';
import { userStore } from '../store/user-store.js';

export function toApiMutedUsers(rows: readonly MutedUserRow[]): Array<{ id: number; timestamp: number }> {
  return rows.map((r) => ({ id: r.muted_user_id, timestamp: Math.floor(r.date_muted.getTime() / 1000) }));
}

/** Zulip's access_user_by_id(allow_bots=False, allow_deactivated=True): people of the realm only. */
async function requireMutableUser(q: Queryable, actor: Actor, userId: number): Promise<void> {
  const row = await userStore.findById(q, actor.realm_id, userId);
  if (!row || row.is_bot) throw badRequest('No such user');
}

async function announce(q: Queryable, change: MutedUserChange): Promise<void> {
  await addToOutbox(q, 'users', usersEvents.mutedUserChanged, change);
  const mutedUsers = toApiMutedUsers(await mutedUserStore.listForUser(q, change.user_id));
  await addToOutbox(q, 'users', eventsInbox.notify, { realm_id: change.realm_id, users: [change.user_id], event: { type: 'muted_users', muted_users: mutedUsers } });
}

/**
 * The messages service stores the change before it is answered, so a message the muted user
 * sends right after the mute arrives read (docs/CONVENTIONS.md, read models). If it cannot,
 * the domain event brings the change a moment later.
 */
async function syncToMessages(deps: UsersDeps, change: MutedUserChange): Promise<void> {
  // Package tests run the users service without a bus; the event alone feeds the read model then.
  if (!deps.bus) return;
  try {
    await deps.bus.request(messagesRpc.syncMutedUser, change, { timeoutMs: 3000 });
  } catch (err) {
    deps.log.warn({ err, user_id: change.user_id }, 'messages service did not take the mute change synchronously; its read model follows by event');
  }
}

/** Stores the change (false when there was nothing to change), announces it and pushes it to the messages service. */
async function changeMute(deps: UsersDeps, actor: Actor, mutedUserId: number, muted: boolean, store: (tx: Queryable) => Promise<boolean>, unchanged: string): Promise<void> {
  const change = await transaction(deps.pool, async (tx) => {
    await requireMutableUser(tx, actor, mutedUserId);
    if (!(await store(tx))) throw badRequest(unchanged);
    const c = { realm_id: actor.realm_id, user_id: actor.user_id, muted_user_id: mutedUserId, muted, revision: await mutedUserStore.revisionNow(tx) };
    await announce(tx, c);
    return c;
  });
  await syncToMessages(deps, change);
}

export async function doMuteUser(deps: UsersDeps, actor: Actor, mutedUserId: number): Promise<void> {
  if (mutedUserId === actor.user_id) throw badRequest('Cannot mute self');
  await changeMute(deps, actor, mutedUserId, true, (tx) => mutedUserStore.insert(tx, actor.realm_id, actor.user_id, mutedUserId, new Date()), 'User already muted');
}

export async function doUnmuteUser(deps: UsersDeps, actor: Actor, mutedUserId: number): Promise<void> {
  await changeMute(deps, actor, mutedUserId, false, (tx) => mutedUserStore.delete(tx, actor.user_id, mutedUserId), 'User is not muted');
}

/**
 * DELETE /users/me/subscriptions: unsubscribes the caller, or the principals, from streams
 * named in the request. Removing someone else needs Zulip's permission: membership of the
 * stream's can_remove_subscribers_group (role:administrators unless changed), or owning the
 * bots being removed, in both cases with access to the stream. A private stream left
 * without subscribers is archived in the same transaction.
 */
import { subscriptionsEvents, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import type { SubscriptionsDeps } from '../deps.js';
import { peerRecipients } from '../lib/audience.js';
import { pushTo } from '../lib/group-by.js';
import { peerEvent, subscriptionRemoveEvent } from '../lib/client-events.js';
import { insufficientPermission, streamDoesNotExist } from '../lib/errors.js';
import type { DirectoryUser } from '@zc/shared/directory';
import { allMembers } from '@zc/shared/policy';
import { canSeeStream } from '../lib/policy.js';
import { normaliseStreamName } from '../lib/stream-rules.js';
import { streamStore, type StreamRow } from '../store/stream-store.js';
import { byUserThenStream, subscriptionStore, type Pair } from '../store/subscription-store.js';
import { checkSubscriptionRequestSize } from '../lib/request-limits.js';
import { activePrincipals, realmFor } from './directory.js';
import { doArchiveStream } from './archive-stream.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';
import { syncStreamToMessages } from './read-model-sync.js';

export interface UnsubscribeInput {
  actor: Actor;
  subscriptions: string[];
  principals?: number[] | string[];
}

async function targets(deps: SubscriptionsDeps, actor: Actor, principals: ReadonlyArray<number | string>): Promise<DirectoryUser[]> {
  if (principals.length === 0) return [await deps.directory.requireUser(deps.pool, actor.realm_id, actor.user_id)];
  return activePrincipals(deps, actor.realm_id, principals);
}

/**
 * Whether the actor may remove `others` from `stream`: they must see the stream, and be in
 * its can_remove_subscribers_group (directly or through subgroups) or own every bot removed.
 */
function mayRemoveOthers(actor: Actor, stream: StreamRow, actorSubscribed: boolean, others: readonly DirectoryUser[], groups: GroupContext): boolean {
  if (!canSeeStream(actor.role, stream, actorSubscribed)) return false;
  if (others.every((u) => u.is_bot && u.bot_owner_id === actor.user_id)) return true;
  return allMembers([stream.can_remove_subscribers_group_id], groups.groupsById, groups.people).has(actor.user_id);
}

type GroupContext = Awaited<ReturnType<SubscriptionsDeps['directory']['groupContext']>>;

export async function checkRemoveSubscriptions(deps: SubscriptionsDeps, r: UnsubscribeInput): Promise<{ removed: string[]; not_removed: string[] }> {
  const { actor } = r;
  checkSubscriptionRequestSize(r.subscriptions.length, r.principals?.length ?? 0);
  await realmFor(deps, actor);
  const names = [...new Map(r.subscriptions.map((n) => normaliseStreamName(n)).map((n) => [n.toLowerCase(), n])).values()];
  const found = await streamStore.listByNames(deps.pool, actor.realm_id, names);
  const byName = new Map(found.map((s) => [s.name.toLowerCase(), s]));
  const missing = names.find((n) => !byName.has(n.toLowerCase()));
  if (missing !== undefined) throw streamDoesNotExist(missing);
  const streams = names.map((n) => byName.get(n.toLowerCase()) as StreamRow);

  const users = await targets(deps, actor, r.principals ?? []);
  const others = users.filter((u) => u.id !== actor.user_id);
  if (others.length > 0) {
    const mine = new Set(
      (await subscriptionStore.listRows(deps.pool, [actor.user_id], streams.map((s) => s.id))).filter((s) => s.active).map((s) => s.stream_id),
    );
    const groups = await deps.directory.groupContext(deps.pool, actor.realm_id);
    for (const s of streams) if (!mayRemoveOthers(actor, s, mine.has(s.id), others, groups)) throw insufficientPermission();
  }

  const { out, archived } = await transaction(deps.pool, async (tx) => {
    // Private streams first, as DELETE and PATCH /streams lock them, so that of two last
    // subscribers leaving at once the second sees the first gone.
    const lockedPrivate = await lockPrivateStreams(tx, actor.realm_id, streams);
    // One lock order for every request, so concurrent changes cannot deadlock each other.
    const pairs = users.flatMap((u) => streams.map((s) => ({ user_id: u.id, stream_id: s.id }))).sort(byUserThenStream);
    const removed = await subscriptionStore.deactivate(tx, pairs);
    await writeEvents(deps, tx, actor.realm_id, streams, removed);
    const archived = await archiveVacatedPrivateStreams(deps, tx, lockedPrivate, removed);
    const isRemoved = new Set(removed.map((p) => `${p.user_id}:${p.stream_id}`));
    const out = { removed: [] as string[], not_removed: [] as string[] };
    for (const u of users) {
      for (const s of streams) (isRemoved.has(`${u.id}:${s.id}`) ? out.removed : out.not_removed).push(s.name);
    }
    return { out, archived };
  });
  for (const s of archived) await syncStreamToMessages(deps, s, []);
  return out;
}

function lockPrivateStreams(tx: Queryable, realmId: number, streams: readonly StreamRow[]): Promise<StreamRow[]> {
  return streamStore.lockByIds(tx, realmId, streams.filter((s) => s.invite_only).map((s) => s.id));
}

/**
 * A private stream whose last active subscriber this request removed is archived, as Zulip
 * does at our feature level (bulk_remove_subscriptions deactivates "newly-vacant private
 * streams"): nobody is left who could add anyone back, so its name is freed and its state
 * leaves every listing. Administrators get the stream delete event, as for DELETE /streams,
 * and so do those who just left (Zulip 6 left their lists stale until they re-registered).
 */
async function archiveVacatedPrivateStreams(deps: SubscriptionsDeps, tx: Queryable, lockedPrivate: readonly StreamRow[], removed: readonly Pair[]): Promise<StreamRow[]> {
  const leaversOf = new Map<number, number[]>();
  for (const p of removed) pushTo(leaversOf, p.stream_id, p.user_id);
  const touched = lockedPrivate.filter((s) => leaversOf.has(s.id));
  if (touched.length === 0) return [];
  const subscribersOf = await subscriptionStore.listSubscriberIds(tx, touched.map((s) => s.id));
  const archived: StreamRow[] = [];
  for (const s of touched) {
    if ((subscribersOf.get(s.id) ?? []).length === 0) archived.push(await doArchiveStream(deps, tx, s, leaversOf.get(s.id)));
  }
  return archived;
}

/** The domain facts, a subscription remove to each removed user, then peer_remove to the rest. */
async function writeEvents(deps: SubscriptionsDeps, tx: Queryable, realmId: number, streams: readonly StreamRow[], removed: readonly Pair[]): Promise<void> {
  if (removed.length === 0) return;
  const removedFrom = new Map<number, number[]>(); // stream id → users removed
  const removedFor = new Map<number, number[]>(); // user id → streams left
  // In user id order, whatever order the database returned the rows in.
  for (const p of [...removed].sort(byUserThenStream)) {
    pushTo(removedFrom, p.stream_id, p.user_id);
    pushTo(removedFor, p.user_id, p.stream_id);
  }
  const touched = streams.filter((s) => removedFrom.has(s.id));
  for (const s of touched) {
    await emitDomainEvent(tx, subscriptionsEvents.subscribersRemoved, { realm_id: realmId, stream_id: s.id, user_ids: removedFrom.get(s.id) ?? [] });
  }
  for (const [userId, streamIds] of removedFor) {
    // In the order the request named the streams.
    const left = streams.filter((s) => streamIds.includes(s.id));
    await notifyUsers(tx, realmId, [userId], subscriptionRemoveEvent(left.map((s) => ({ stream_id: s.id, name: s.name }))));
  }
  const subscribersOf = await subscriptionStore.listSubscriberIds(tx, touched.map((s) => s.id));
  const people = await deps.directory.realmPeople(tx, realmId);
  for (const s of touched) {
    const altered = removedFrom.get(s.id) ?? [];
    await notifyUsers(tx, realmId, peerRecipients(s, subscribersOf.get(s.id) ?? [], people, altered), peerEvent('peer_remove', [s.id], altered));
  }
}

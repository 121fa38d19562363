/** Read paths for a user's subscriptions (spec 4.22) and the lookups other services need. */
import type { ReplyOf } from '@zc/shared/bus';
import type { Actor, subscriptionsRpc } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import type { SubscriptionsDeps } from '../deps.js';
import { realmFor } from '../actions/directory.js';
import { isoDay, toApiSubscription, toStreamRecord } from '../lib/stream-view.js';
import { streamStatsStore } from '../store/stream-stats-store.js';
import { streamStore } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';

/**
 * The user's subscriptions (active, or the inactive ones for /register's `unsubscribed`) as
 * spec 2.5 objects, sorted by stream name.
 */
export async function readSubscriptions(
  q: Queryable,
  actor: Actor,
  o: { active: boolean; includeSubscribers: boolean; emailHost: string },
): Promise<Array<Record<string, unknown>>> {
  const subs = await subscriptionStore.listForUser(q, actor.user_id, o.active);
  const streams = await streamStore.listByIds(q, actor.realm_id, subs.map((s) => s.stream_id));
  const ids = streams.map((s) => s.id);
  const stats = await streamStatsStore.statsFor(q, ids, isoDay());
  const subscribers = o.includeSubscribers ? await subscriptionStore.listSubscriberIds(q, ids) : undefined;
  const subOf = new Map(subs.map((s) => [s.stream_id, s]));
  return streams
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
    .map((s) =>
      toApiSubscription(s, subOf.get(s.id) as (typeof subs)[number], {
        stats: stats.get(s.id),
        emailHost: o.emailHost,
        ...(subscribers ? { subscribers: subscribers.get(s.id) ?? [] } : {}),
      }),
    );
}

/** GET /users/me/subscriptions. */
export async function listSubscriptions(deps: SubscriptionsDeps, actor: Actor, includeSubscribers: boolean): Promise<Array<Record<string, unknown>>> {
  const realm = await realmFor(deps, actor);
  return readSubscriptions(deps.pool, actor, { active: true, includeSubscribers, emailHost: realm.host });
}

type StreamAccessReply = ReplyOf<typeof subscriptionsRpc.streamAccess>;

/** A stream by id or name with the user's relation to it; no access rule applied (callers decide). */
export async function getStreamAccess(
  deps: SubscriptionsDeps,
  r: { realm_id: number; user_id: number; stream: { stream_id: number } | { name: string } },
): Promise<StreamAccessReply> {
  const stream =
    'stream_id' in r.stream ? await streamStore.findById(deps.pool, r.realm_id, r.stream.stream_id) : await streamStore.findByName(deps.pool, r.realm_id, r.stream.name);
  if (!stream) return { stream: null, subscribed: false, subscriber_ids: [] };
  const subscriberIds = (await subscriptionStore.listSubscriberIds(deps.pool, [stream.id])).get(stream.id) ?? [];
  const sub = await subscriptionStore.find(deps.pool, r.user_id, stream.id);
  return { stream: toStreamRecord(stream), subscribed: sub?.active === true, subscriber_ids: subscriberIds };
}

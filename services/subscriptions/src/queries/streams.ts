/** GET /streams (spec 4.13), GET /streams/{stream_id} and GET /get_stream_id. */
import type { Actor } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import type { SubscriptionsDeps } from '../deps.js';
import { isAdminRole, isGuestRole } from '@zc/shared/policy';
import { realmFor } from '../actions/directory.js';
import { invalidStreamId, invalidStreamName } from '../lib/errors.js';
import { canAccessStream, canSeeStream } from '../lib/policy.js';
import { isoDay, toApiStream } from '../lib/stream-view.js';
import { streamStatsStore } from '../store/stream-stats-store.js';
import { streamStore, type StreamRow } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';

export interface StreamFilter {
  include_public: boolean;
  include_web_public: boolean;
  include_subscribed: boolean;
  include_all_active: boolean;
  include_default: boolean;
  include_owner_subscribed: boolean;
}

/** API stream objects with their statistics, in the order given. */
export async function presentStreams(q: Queryable, streams: readonly StreamRow[]): Promise<Array<Record<string, unknown>>> {
  const stats = await streamStatsStore.statsFor(q, streams.map((s) => s.id), isoDay());
  return streams.map((s) => toApiStream(s, stats.get(s.id)));
}

/**
 * The union of the sources asked for (Zulip's do_get_streams): subscribed streams, public
 * ones (not for guests), web-public ones, the realm's default streams, and for a bot its
 * owner's streams; or every stream for an administrator's include_all_active.
 */
export async function selectStreams(deps: SubscriptionsDeps, q: Queryable, actor: Actor, f: StreamFilter): Promise<StreamRow[]> {
  const all = await streamStore.listByRealm(q, actor.realm_id);
  if (f.include_all_active) return all;
  const subscribed = new Set(f.include_subscribed ? await subscriptionStore.listSubscribedStreamIds(q, actor.user_id) : []);
  const defaults = new Set(f.include_default ? await streamStore.listDefaultStreamIds(q, actor.realm_id) : []);
  let owners = new Set<number>();
  if (f.include_owner_subscribed && actor.is_bot) {
    const me = await deps.directory.requireUser(q, actor.realm_id, actor.user_id);
    if (me.bot_owner_id !== null) owners = new Set(await subscriptionStore.listSubscribedStreamIds(q, me.bot_owner_id));
  }
  const includePublic = f.include_public && !isGuestRole(actor.role);
  return all.filter(
    (s) =>
      subscribed.has(s.id) ||
      (includePublic && !s.invite_only) ||
      (f.include_web_public && s.is_web_public && !s.invite_only && s.history_public_to_subscribers) ||
      defaults.has(s.id) ||
      owners.has(s.id),
  );
}

export async function listStreams(deps: SubscriptionsDeps, actor: Actor, f: StreamFilter): Promise<Array<Record<string, unknown>>> {
  if (f.include_all_active && !isAdminRole(actor.role)) throw badRequest('User not authorized for this query');
  await realmFor(deps, actor);
  const streams = await selectStreams(deps, deps.pool, actor, f);
  const out = await presentStreams(deps.pool, streams);
  if (f.include_default) {
    const defaults = new Set(await streamStore.listDefaultStreamIds(deps.pool, actor.realm_id));
    for (const s of out) s.is_default = defaults.has(s.stream_id as number);
  }
  return out;
}

async function isSubscribed(q: Queryable, userId: number, streamId: number): Promise<boolean> {
  return (await subscriptionStore.find(q, userId, streamId))?.active === true;
}

/** GET /streams/{stream_id}: administrators also see private streams' metadata. */
export async function getStream(deps: SubscriptionsDeps, actor: Actor, streamId: number): Promise<Record<string, unknown>> {
  const stream = await streamStore.findById(deps.pool, actor.realm_id, streamId);
  if (!stream || !canSeeStream(actor.role, stream, await isSubscribed(deps.pool, actor.user_id, stream.id))) throw invalidStreamId();
  const [out] = await presentStreams(deps.pool, [stream]);
  return out as Record<string, unknown>;
}

/** GET /get_stream_id: the same error for a missing stream and one the caller cannot access. */
export async function getStreamId(deps: SubscriptionsDeps, actor: Actor, name: string): Promise<number> {
  const stream = await streamStore.findByName(deps.pool, actor.realm_id, name);
  if (!stream || !canAccessStream(actor.role, stream, await isSubscribed(deps.pool, actor.user_id, stream.id))) throw invalidStreamName(name);
  return stream.id;
}

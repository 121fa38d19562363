/**
 * GET /streams/{stream_id}/members and GET /users/{user_id}/subscriptions/{stream_id}:
 * Zulip's get_subscribers_backend and get_subscription_backend. Both need the stream to be
 * one the caller may see (access_stream_by_id with allow_realm_admin: administrators see
 * private streams' membership too; guests only streams they are subscribed to).
 */
import type { Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import type { SubscriptionsDeps } from '../deps.js';
import { realmFor } from '../actions/directory.js';
import { invalidStreamId } from '../lib/errors.js';
import { canSeeStream } from '../lib/policy.js';
import { streamStore, type StreamRow } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';

async function seeableStream(deps: SubscriptionsDeps, actor: Actor, streamId: number): Promise<StreamRow> {
  const stream = await streamStore.findById(deps.pool, actor.realm_id, streamId);
  const subscribed = stream ? (await subscriptionStore.find(deps.pool, actor.user_id, stream.id))?.active === true : false;
  if (!stream || !canSeeStream(actor.role, stream, subscribed)) throw invalidStreamId();
  return stream;
}

/** The stream's active subscribers, by id. */
export async function listStreamMembers(deps: SubscriptionsDeps, actor: Actor, streamId: number): Promise<number[]> {
  await realmFor(deps, actor);
  const stream = await seeableStream(deps, actor, streamId);
  return ((await subscriptionStore.listSubscriberIds(deps.pool, [stream.id])).get(stream.id) ?? []).sort((a, b) => a - b);
}

/** Whether `userId` is subscribed to the stream; the user is checked first, as Zulip does. */
export async function getSubscriptionStatus(deps: SubscriptionsDeps, actor: Actor, userId: number, streamId: number): Promise<boolean> {
  await realmFor(deps, actor);
  const target = (await deps.directory.resolveUsers(deps.pool, actor.realm_id, [userId])).found[0];
  if (!target) throw badRequest('No such user');
  if (!target.is_active) throw badRequest('User is deactivated');
  const stream = await seeableStream(deps, actor, streamId);
  return (await subscriptionStore.find(deps.pool, target.id, stream.id))?.active === true;
}

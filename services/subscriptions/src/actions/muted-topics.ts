/**
 * PATCH /users/me/subscriptions/muted_topics (spec 4.12, transitions in spec §3). Muting
 * needs access to the stream (Zulip does not require a subscription); unmuting only needs
 * the stream to exist, and any failure to find the muted topic is "Topic is not muted".
 */
import { subscriptionsEvents, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import type { SubscriptionsDeps } from '../deps.js';
import { mutedTopicsEvent, userTopicEvent } from '../lib/client-events.js';
import { invalidStreamId, invalidStreamName, topicAlreadyMuted, topicNotMuted } from '../lib/errors.js';
import { canAccessStream } from '../lib/policy.js';
import { unixSeconds } from '../lib/stream-view.js';
import { streamStore, type StreamRow } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { userTopicStore } from '../store/user-topic-store.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';

/** Zulip's visibility policies (user_topic events). */
export const VisibilityPolicy = { INHERIT: 0, MUTED: 1, UNMUTED: 2, FOLLOWED: 3 } as const;

export interface MutedTopicInput {
  actor: Actor;
  stream_id?: number;
  stream?: string;
  topic: string;
  op: 'add' | 'remove';
}

/** The one stream argument, as Zulip insists. */
function streamArgument(r: MutedTopicInput): { stream_id: number } | { name: string } {
  if (r.stream_id === undefined && r.stream === undefined) throw badRequest("Please supply 'stream'.");
  if (r.stream_id !== undefined && r.stream !== undefined) throw badRequest("Please choose one: 'stream' or 'stream_id'.");
  return r.stream_id !== undefined ? { stream_id: r.stream_id } : { name: r.stream as string };
}

async function findStream(deps: SubscriptionsDeps, realmId: number, ref: { stream_id: number } | { name: string }): Promise<StreamRow | undefined> {
  return 'stream_id' in ref ? streamStore.findById(deps.pool, realmId, ref.stream_id) : streamStore.findByName(deps.pool, realmId, ref.name);
}

/** A stream the actor can read, or the error Zulip gives for a missing one (the same for no access). */
async function accessStream(deps: SubscriptionsDeps, actor: Actor, ref: { stream_id: number } | { name: string }): Promise<StreamRow> {
  const stream = await findStream(deps, actor.realm_id, ref);
  const subscribed = stream ? (await subscriptionStore.find(deps.pool, actor.user_id, stream.id))?.active === true : false;
  if (!stream || !canAccessStream(actor.role, stream, subscribed)) throw 'stream_id' in ref ? invalidStreamId() : invalidStreamName(ref.name);
  return stream;
}

export async function checkUpdateMutedTopic(deps: SubscriptionsDeps, r: MutedTopicInput): Promise<void> {
  const ref = streamArgument(r);
  const { actor } = r;
  if (r.op === 'add') {
    const stream = await accessStream(deps, actor, ref);
    const current = await userTopicStore.find(deps.pool, actor.user_id, stream.id, r.topic);
    if (current?.visibility_policy === VisibilityPolicy.MUTED) throw topicAlreadyMuted();
    await setPolicy(deps, actor, stream, r.topic, VisibilityPolicy.MUTED);
  } else {
    const stream = await findStream(deps, actor.realm_id, ref);
    const current = stream && (await userTopicStore.find(deps.pool, actor.user_id, stream.id, r.topic));
    if (!stream || current?.visibility_policy !== VisibilityPolicy.MUTED) throw topicNotMuted();
    // The stored spelling of the topic is what clients have in their muted list.
    await setPolicy(deps, actor, stream, current.topic_name, VisibilityPolicy.INHERIT);
  }
}

async function setPolicy(deps: SubscriptionsDeps, actor: Actor, stream: StreamRow, topic: string, policy: number): Promise<void> {
  const now = new Date();
  await transaction(deps.pool, async (tx) => {
    if (policy === VisibilityPolicy.INHERIT) {
      // A concurrent unmute got there first: the state is what was asked for, the error what Zulip says.
      if (!(await userTopicStore.remove(tx, actor.user_id, stream.id, topic))) throw topicNotMuted();
    } else {
      await userTopicStore.upsert(tx, { user_id: actor.user_id, stream_id: stream.id, realm_id: actor.realm_id, topic_name: topic, visibility_policy: policy, last_updated: now });
    }
    await emitDomainEvent(tx, subscriptionsEvents.userTopicChanged, {
      realm_id: actor.realm_id,
      user_id: actor.user_id,
      stream_id: stream.id,
      topic_name: topic,
      visibility_policy: policy,
      last_updated: unixSeconds(now),
    });
    await notifyUsers(tx, actor.realm_id, [actor.user_id], userTopicEvent({ stream_id: stream.id, topic_name: topic, last_updated: now }, policy));
    await notifyUsers(tx, actor.realm_id, [actor.user_id], mutedTopicsEvent(await mutedTopicList(tx, actor.user_id)));
  });
}

/** The legacy muted_topics list: [stream name, topic, muted at (seconds)]. */
export async function mutedTopicList(q: Queryable, userId: number): Promise<Array<[string, string, number]>> {
  const rows = await userTopicStore.listForUser(q, userId);
  return rows.filter((t) => t.visibility_policy === VisibilityPolicy.MUTED).map((t) => [t.stream_name, t.topic_name, unixSeconds(t.last_updated)]);
}

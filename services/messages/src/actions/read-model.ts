/**
 * Keeping the read models of streams and subscribers, and feeding the directory copy
 * (@zc/shared/directory, deps.directory): applying the owners' domain events, and — for read-your-writes — asking the owner synchronously when the read
 * model does not know something yet, then storing the answer.
 */
import type { DeliveredArgs, EventMeta } from '@zc/shared/bus';
import { isGuest, subscriptionsEvents, subscriptionsRpc, userGroupEvents, usersEvents, type Actor, type StreamRecord } from '@zc/shared/contracts';
import { badRequest, isAppError } from '@zc/shared/errors';
import { transaction } from '@zc/shared/db';
import type { MessagesDeps } from '../deps.js';
import { applyMutedUserChange } from './muted-users.js';
import { readModelStore, type StreamRow } from '../store/read-model-store.js';
import { renderStore } from '../store/render-store.js';

/** The users service's events this service consumes: its directory copy, linkifiers and alert words. */
export const USERS_READ_MODEL_EVENTS = [...Object.values(usersEvents), userGroupEvents.changed];
/** The subscriptions service's events the read models follow (the announcements have their own consumer). */
export const SUBSCRIPTIONS_READ_MODEL_EVENTS = [
  subscriptionsEvents.streamCreated,
  subscriptionsEvents.streamUpdated,
  subscriptionsEvents.subscribersAdded,
  subscriptionsEvents.subscribersRemoved,
  subscriptionsEvents.subscriptionUpdated,
  subscriptionsEvents.userTopicChanged,
] as const;

/** Applies one users-service domain event. */
export async function applyUsersEvent(deps: MessagesDeps, ...[subject, payload, meta]: DeliveredArgs<typeof USERS_READ_MODEL_EVENTS, EventMeta>): Promise<void> {
  switch (subject) {
    case usersEvents.realmCreated.subject:
    case usersEvents.realmUpdated.subject:
      await deps.directory.apply([subject, payload]);
      return;
    case usersEvents.userCreated.subject:
    case usersEvents.userUpdated.subject:
      await deps.directory.apply([subject, payload]);
      deps.render.applyUser(payload, meta.msgId);
      return;
    case usersEvents.linkifiersChanged.subject:
      await renderStore.setRealmLinkifiers(deps.pool, payload.realm_id, payload.linkifiers);
      deps.render.setLinkifiers(payload.realm_id, payload.linkifiers, meta.msgId);
      return;
    case userGroupEvents.changed.subject:
      await deps.directory.apply([subject, payload]);
      deps.render.applyGroup(payload);
      return;
    case usersEvents.mutedUserChanged.subject:
      await applyMutedUserChange(deps, payload);
      return;
    case usersEvents.alertWordsChanged.subject:
      await renderStore.setAlertWords(deps.pool, payload.realm_id, payload.user_id, payload.alert_words);
      deps.render.setAlertWords(payload.realm_id, payload.user_id, payload.alert_words, meta.msgId);
      return;
    default:
      return;
  }
}

/** Applies one subscriptions-service domain event. */
export async function applySubscriptionsEvent(
  deps: MessagesDeps,
  ...[subject, payload, meta]: DeliveredArgs<typeof SUBSCRIPTIONS_READ_MODEL_EVENTS, EventMeta>
): Promise<void> {
  switch (subject) {
    case subscriptionsEvents.streamCreated.subject:
    case subscriptionsEvents.streamUpdated.subject:
      await readModelStore.upsertStream(deps.pool, payload);
      deps.render.applyStream(payload, meta.msgId);
      return;
    case subscriptionsEvents.subscribersAdded.subject:
      await readModelStore.addSubscribers(deps.pool, payload.stream_id, payload.user_ids);
      return;
    case subscriptionsEvents.subscribersRemoved.subject:
      await readModelStore.removeSubscribers(deps.pool, payload.stream_id, payload.user_ids);
      return;
    case subscriptionsEvents.subscriptionUpdated.subject:
      if (payload.property === 'is_muted') await readModelStore.setSubscriptionMuted(deps.pool, payload.stream_id, payload.user_id, payload.value === true);
      if (payload.property === 'in_home_view') await readModelStore.setSubscriptionMuted(deps.pool, payload.stream_id, payload.user_id, payload.value === false);
      return;
    case subscriptionsEvents.userTopicChanged.subject:
      await readModelStore.setUserTopic(deps.pool, payload.user_id, payload.stream_id, payload.topic_name, payload.visibility_policy);
      return;
    default:
      return;
  }
}

/**
 * messagesRpc.syncStream: the owner's row and subscribers, stored before the owner answers
 * its client. A record older than the stored one (the answer raced a newer change) is left
 * out, subscribers included.
 */
export async function doSyncStream(deps: MessagesDeps, r: { stream: StreamRecord; subscriber_ids: number[] }): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const row = await readModelStore.upsertStream(tx, r.stream);
    if (r.stream.revision === undefined || row.revision === r.stream.revision) await readModelStore.replaceSubscribers(tx, row.id, r.subscriber_ids);
  });
}

export interface StreamAccessView {
  stream: StreamRow | undefined;
  subscribed: boolean;
}

/**
 * A stream and whether `userId` is subscribed, from the read model; when the read model
 * does not know the stream or says "not subscribed", the subscriptions service is asked
 * (its answer may be newer than the events we have consumed) and the answer is stored.
 * If that service cannot answer, the read model's view stands.
 */
export async function streamAccessFor(
  deps: MessagesDeps,
  realmId: number,
  userId: number,
  ref: { stream_id: number } | { name: string },
): Promise<StreamAccessView> {
  const stream = 'stream_id' in ref ? await readModelStore.streamById(deps.pool, realmId, ref.stream_id) : await readModelStore.streamByName(deps.pool, realmId, ref.name);
  const subscribed = stream ? await readModelStore.isSubscribed(deps.pool, stream.id, userId) : false;
  if (stream && subscribed) return { stream, subscribed };
  let answer;
  try {
    answer = await deps.bus.request(subscriptionsRpc.streamAccess, { realm_id: realmId, user_id: userId, stream: ref }, { timeoutMs: 3000 });
  } catch (e) {
    if (isAppError(e) && e.httpStatus === 503) {
      deps.log.warn({ realm_id: realmId }, 'subscriptions service did not answer stream_access; using the read model');
      return { stream, subscribed };
    }
    throw e;
  }
  if (!answer.stream || answer.stream.realm_id !== realmId) return { stream: undefined, subscribed: false };
  const fresh = answer.stream;
  const row = await transaction(deps.pool, async (tx) => {
    const r = await readModelStore.upsertStream(tx, fresh);
    await readModelStore.replaceSubscribers(tx, r.id, answer.subscriber_ids);
    return r;
  });
  return { stream: row, subscribed: answer.subscribed };
}

export interface OwnerStreamView {
  stream: StreamRow | undefined;
  subscribed: boolean;
  subscriberIds: number[];
  /** Whether the answer differed from the read model and was stored (the realm's read-model version moved). */
  stored: boolean;
}

const sameStream = (row: StreamRow, r: StreamRecord) =>
  row.id === r.stream_id &&
  row.realm_id === r.realm_id &&
  row.name === r.name &&
  row.invite_only === r.invite_only &&
  row.is_web_public === r.is_web_public &&
  row.history_public_to_subscribers === r.history_public_to_subscribers &&
  row.stream_post_policy === r.stream_post_policy &&
  row.is_archived === r.is_archived;

function sameMembers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  const s = new Set(a);
  return b.every((x) => s.has(x));
}

/**
 * The stream, its subscribers and the user's subscription as the subscriptions service has
 * them now. The read model trails the owner by an event's trip, so a send that must not go by
 * a stale subscriber set (a private stream: someone just removed would get it, someone just
 * added would never see it) asks here. The answer is stored only when it differs from `known`
 * (the read model's rows): storing bumps the realm's read-model version, which sends checked
 * against the old rows must notice. If the service cannot answer, `known` stands.
 */
export async function confirmStreamWithOwner(
  deps: MessagesDeps,
  realmId: number,
  userId: number,
  ref: { stream_id: number } | { name: string },
  known: { stream: StreamRow | null; subscriber_ids: number[] },
): Promise<OwnerStreamView> {
  let answer;
  try {
    answer = await deps.bus.request(subscriptionsRpc.streamAccess, { realm_id: realmId, user_id: userId, stream: ref }, { timeoutMs: 3000 });
  } catch (e) {
    if (isAppError(e) && e.httpStatus === 503) {
      deps.log.warn({ realm_id: realmId }, 'subscriptions service did not answer stream_access; using the read model');
      return { stream: known.stream ?? undefined, subscribed: known.subscriber_ids.includes(userId), subscriberIds: known.subscriber_ids, stored: false };
    }
    throw e;
  }
  if (!answer.stream || answer.stream.realm_id !== realmId) return { stream: undefined, subscribed: false, subscriberIds: [], stored: false };
  const fresh = answer.stream;
  if (known.stream && sameStream(known.stream, fresh) && sameMembers(known.subscriber_ids, answer.subscriber_ids)) {
    return { stream: known.stream, subscribed: answer.subscribed, subscriberIds: known.subscriber_ids, stored: false };
  }
  const row = await transaction(deps.pool, async (tx) => {
    const r = await readModelStore.upsertStream(tx, fresh);
    await readModelStore.replaceSubscribers(tx, r.id, answer.subscriber_ids);
    return r;
  });
  return { stream: row, subscribed: answer.subscribed, subscriberIds: answer.subscriber_ids, stored: true };
}

/**
 * Zulip's access_stream_by_id (marking read, deleting a topic): the stream must exist and be
 * readable by the user. The owner is asked when the read model does not know the stream or
 * the subscription (a stream created a moment ago, issue 16).
 */
export async function accessStreamById(deps: MessagesDeps, actor: Actor, streamId: number): Promise<StreamRow> {
  const { stream, subscribed } = await streamAccessFor(deps, actor.realm_id, actor.user_id, { stream_id: streamId });
  if (!stream || stream.is_archived) throw badRequest('Invalid channel ID');
  if ((stream.invite_only || isGuest(actor)) && !subscribed) throw badRequest('Invalid channel ID');
  return stream;
}

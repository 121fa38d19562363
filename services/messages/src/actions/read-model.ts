/**
 * Keeping the read models of users, realms, streams and subscribers: applying the owners'
 * domain events, and — for read-your-writes — asking the owner synchronously when the read
 * model does not know something yet, then storing the answer.
 */
import type { EventMeta } from '@zc/shared/bus';
import {
  subscriptionsEvents,
  subscriptionsRpc,
  users,
  usersEvents,
  type Linkifier,
  type RealmRecord,
  type StreamRecord,
  type SubscribersChange,
  type UserRecord,
} from '@zc/shared/contracts';
import { badRequest, isAppError } from '@zc/shared/errors';
import { transaction, type Queryable } from '@zc/shared/db';
import type { MessagesDeps } from '../deps.js';
import { readModelStore, type RealmRow, type StreamRow, type UserRow } from '../store/read-model-store.js';
import { renderStore } from '../store/render-store.js';

/** Applies one users-service domain event. */
export async function applyUsersEvent(deps: MessagesDeps, subject: string, payload: unknown, meta?: EventMeta): Promise<void> {
  switch (subject) {
    case usersEvents.realmCreated.subject:
    case usersEvents.realmUpdated.subject:
      await readModelStore.upsertRealm(deps.pool, payload as RealmRecord);
      return;
    case usersEvents.userCreated.subject:
    case usersEvents.userUpdated.subject:
      await readModelStore.upsertUsers(deps.pool, [payload as UserRecord]);
      deps.render.applyEvent(subject, payload, meta?.msgId);
      return;
    case usersEvents.linkifiersChanged.subject: {
      const p = payload as { realm_id: number; linkifiers: Linkifier[] };
      await renderStore.setRealmLinkifiers(deps.pool, p.realm_id, p.linkifiers);
      deps.render.applyEvent(subject, payload, meta?.msgId);
      return;
    }
    case usersEvents.alertWordsChanged.subject: {
      const p = payload as { realm_id: number; user_id: number; alert_words: string[] };
      await renderStore.setAlertWords(deps.pool, p.realm_id, p.user_id, p.alert_words);
      deps.render.applyEvent(subject, payload, meta?.msgId);
      return;
    }
    default:
      return;
  }
}

/** Applies one subscriptions-service domain event. */
export async function applySubscriptionsEvent(deps: MessagesDeps, subject: string, payload: unknown, meta?: EventMeta): Promise<void> {
  switch (subject) {
    case subscriptionsEvents.streamCreated.subject:
    case subscriptionsEvents.streamUpdated.subject:
      await readModelStore.upsertStream(deps.pool, payload as StreamRecord);
      deps.render.applyEvent(subject, payload, meta?.msgId);
      return;
    case subscriptionsEvents.subscribersAdded.subject: {
      const c = payload as SubscribersChange;
      await readModelStore.addSubscribers(deps.pool, c.stream_id, c.user_ids);
      return;
    }
    case subscriptionsEvents.subscribersRemoved.subject: {
      const c = payload as SubscribersChange;
      await readModelStore.removeSubscribers(deps.pool, c.stream_id, c.user_ids);
      return;
    }
    case subscriptionsEvents.subscriptionUpdated.subject: {
      const c = payload as { stream_id: number; user_id: number; property: string; value: unknown };
      if (c.property === 'is_muted') await readModelStore.setSubscriptionMuted(deps.pool, c.stream_id, c.user_id, c.value === true);
      if (c.property === 'in_home_view') await readModelStore.setSubscriptionMuted(deps.pool, c.stream_id, c.user_id, c.value === false);
      return;
    }
    case subscriptionsEvents.userTopicChanged.subject: {
      const c = payload as { user_id: number; stream_id: number; topic_name: string; visibility_policy: number };
      await readModelStore.setUserTopic(deps.pool, c.user_id, c.stream_id, c.topic_name, c.visibility_policy);
      return;
    }
    default:
      return;
  }
}

/** The realm, fetched with all its users from the users service if we have not heard of it. */
export async function ensureRealm(deps: MessagesDeps, realmId: number): Promise<RealmRow> {
  const known = await readModelStore.findRealm(deps.pool, realmId);
  if (known) return known;
  const snap = await deps.bus.request(users.realmSnapshot, { realm_id: realmId });
  await transaction(deps.pool, async (tx) => {
    await readModelStore.upsertRealm(tx, snap.realm);
    await readModelStore.upsertUsers(tx, snap.users);
  });
  const realm = await readModelStore.findRealm(deps.pool, realmId);
  if (!realm) throw badRequest('Invalid realm');
  return realm;
}

export interface ResolvedUsers {
  users: UserRow[];
  missingIds: number[];
  missingEmails: string[];
}

/** Users by ids and emails from the read model, asking the users service about the rest. */
export async function resolveUsers(deps: MessagesDeps, q: Queryable, realmId: number, ids: readonly number[], emails: readonly string[]): Promise<ResolvedUsers> {
  const found = new Map<number, UserRow>();
  for (const u of await readModelStore.usersByIds(q, realmId, ids)) found.set(u.id, u);
  for (const u of await readModelStore.usersByEmails(q, realmId, emails)) found.set(u.id, u);
  const hasEmail = (e: string) => [...found.values()].some((u) => u.email.toLowerCase() === e.toLowerCase() || u.delivery_email.toLowerCase() === e.toLowerCase());
  let missingIds = ids.filter((id) => !found.has(id));
  let missingEmails = emails.filter((e) => !hasEmail(e));
  if (missingIds.length || missingEmails.length) {
    const reply = await deps.bus.request(users.resolve, { realm_id: realmId, user_ids: missingIds, emails: missingEmails });
    await readModelStore.upsertUsers(deps.pool, reply.users);
    for (const u of await readModelStore.usersByIds(deps.pool, realmId, reply.users.map((x) => x.user_id))) found.set(u.id, u);
    missingIds = missingIds.filter((id) => !found.has(id));
    missingEmails = missingEmails.filter((e) => !hasEmail(e));
  }
  return { users: [...found.values()], missingIds, missingEmails };
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

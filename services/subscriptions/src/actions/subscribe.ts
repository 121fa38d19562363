/**
 * POST /users/me/subscriptions (spec 4.6): subscribes the caller or the principals to
 * streams, creating the missing ones with the request's initial settings. Every check runs
 * before the one transaction that creates, subscribes and writes the events, so a refused
 * request changes nothing.
 */
import { Role, subscriptionsEvents, type SubscribeReply, type SubscribeRequest } from '@zc/shared/contracts';
import { randomUUID } from 'node:crypto';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import { badRequest } from '@zc/shared/errors';
import type { SubscriptionsDeps } from '../deps.js';
import type { RealmPeople } from '@zc/shared/directory';
import { streamAudience, peerRecipients } from '../lib/audience.js';
import { inChunks, streamCreateEvent, subscriptionAddEvent, peerEvent } from '../lib/client-events.js';
import { isHexColor, pickColors } from '../lib/colors.js';
import { pushTo } from '../lib/group-by.js';
import { insufficientPermission, ownerRequired, unableToAccessStream, webPublicNotEnabled } from '../lib/errors.js';
import type { DirectoryUser } from '@zc/shared/directory';
import { hasPolicyPermission, systemGroupId, type PolicySubject } from '@zc/shared/policy';
import { canAccessStream, canCreateStream, canSeeStream, canSubscribeOthers } from '../lib/policy.js';
import { renderDescription } from '../lib/render-description.js';
import { checkSubscriptionRequestSize } from '../lib/request-limits.js';
import { subscribedYouMessage } from '../lib/stream-notices.js';
import { newEmailToken } from '../lib/stream-email.js';
import { checkStreamName, historyPublicToSubscribers, normaliseDescription, normaliseStreamName, parseMessageRetentionDays, streamPostPolicy } from '../lib/stream-rules.js';
import { isoDay, toApiStream, toApiSubscription, toStreamRecord } from '../lib/stream-view.js';
import { streamStatsStore } from '../store/stream-stats-store.js';
import { streamStore, type NewStream, type StreamRow } from '../store/stream-store.js';
import { byUserThenStream, subscriptionStore, type NewSubscription, type Pair, type SubscriptionRow } from '../store/subscription-store.js';
import { activePrincipals, realmFor, type Realm } from './directory.js';
import { EventBatch } from './outbox.js';
import { postNoticesNow } from './post-notices.js';

/** A stream named in the request, normalised. */
interface WantedStream {
  name: string;
  description: string;
  color?: string;
}

/** Settings every stream created by this request gets. */
interface NewStreamSettings {
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  stream_post_policy: number;
  message_retention_days: number | null;
}

/** Another request created a stream of the same name first: the request is planned again. */
class StreamNameTaken extends Error {}

function wantedStreams(r: SubscribeRequest): WantedStream[] {
  checkSubscriptionRequestSize(r.subscriptions.length, r.principals?.length ?? 0);
  const seen = new Set<string>();
  const out: WantedStream[] = [];
  r.subscriptions.forEach((s, i) => {
    const name = normaliseStreamName(s.name);
    checkStreamName(name);
    const description = normaliseDescription(s.description, i);
    if (s.color !== undefined && !isHexColor(s.color)) throw badRequest(`subscriptions[${i}]["color"] is not a valid hex color code`);
    // The same stream named twice (in any case) is subscribed once, as the first naming says.
    if (seen.has(name.toLowerCase())) return;
    seen.add(name.toLowerCase());
    out.push({ name, description, ...(s.color !== undefined ? { color: s.color } : {}) });
  });
  return out;
}

function newStreamSettings(deps: SubscriptionsDeps, r: SubscribeRequest, realm: Realm, me: PolicySubject): NewStreamSettings {
  if (r.is_web_public) {
    if (!deps.settings.webPublicStreamsEnabled || !realm.settings.enable_spectator_access) throw webPublicNotEnabled();
    if (!hasPolicyPermission(me, realm.settings.create_web_public_stream_policy, realm.settings.waiting_period_threshold)) {
      throw insufficientPermission();
    }
    if (r.invite_only) throw badRequest('Invalid parameters');
  }
  return {
    invite_only: r.invite_only,
    is_web_public: r.is_web_public,
    history_public_to_subscribers: historyPublicToSubscribers(r.invite_only, r.history_public_to_subscribers),
    stream_post_policy: streamPostPolicy(r.stream_post_policy, r.is_announcement_only),
    message_retention_days: r.message_retention_days === undefined ? null : parseMessageRetentionDays(r.message_retention_days),
  };
}

/** The users to subscribe: the principals (all active users of the realm), or the caller. */
async function subscribers(deps: SubscriptionsDeps, r: SubscribeRequest, me: DirectoryUser, member: PolicySubject, realm: Realm): Promise<DirectoryUser[]> {
  const principals = r.principals ?? [];
  if (principals.length === 0) return [me];
  if (!canSubscribeOthers(member, realm.settings)) throw insufficientPermission();
  return activePrincipals(deps, realm.id, principals);
}

export async function checkAddSubscriptions(deps: SubscriptionsDeps, r: SubscribeRequest): Promise<SubscribeReply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await addSubscriptions(deps, r);
    } catch (e) {
      if (!(e instanceof StreamNameTaken) || attempt >= 3) throw e;
    }
  }
}

async function addSubscriptions(deps: SubscriptionsDeps, r: SubscribeRequest): Promise<SubscribeReply> {
  const { actor } = r;
  const realm = await realmFor(deps, actor);
  const me = await deps.directory.requireUser(deps.pool, realm.id, actor.user_id);
  // The role the gateway authenticated is the current one; the read model gives the join date.
  const member: PolicySubject = { role: actor.role, date_joined: me.date_joined };

  const wanted = wantedStreams(r);
  const settings = newStreamSettings(deps, r, realm, member);

  const existing = await streamStore.listByNames(deps.pool, realm.id, wanted.map((w) => w.name));
  const byName = new Map(existing.map((s) => [s.name.toLowerCase(), s]));
  const missing = wanted.filter((w) => !byName.has(w.name.toLowerCase()));
  if (missing.length > 0) {
    if (!canCreateStream(member, realm.settings, settings)) throw insufficientPermission();
    // Zulip lets only owners choose a retention period for new streams.
    if (r.message_retention_days !== undefined && actor.role !== Role.OWNER) throw ownerRequired();
  }

  const mine = new Set(
    (await subscriptionStore.listRows(deps.pool, [actor.user_id], existing.map((s) => s.id))).filter((s) => s.active).map((s) => s.stream_id),
  );
  const existingInOrder = wanted.map((w) => byName.get(w.name.toLowerCase())).filter((s): s is StreamRow => s !== undefined);
  const authorized = existingInOrder.filter((s) => canAccessStream(actor.role, s, mine.has(s.id)));
  const unauthorized = existingInOrder.filter((s) => !authorized.includes(s));
  if (unauthorized.length > 0 && r.authorization_errors_fatal) throw unableToAccessStream((unauthorized[0] as StreamRow).name);

  const users = await subscribers(deps, r, me, member, realm);
  const rendered = await Promise.all(missing.map((w) => renderDescription(w.description, realm.url)));
  const colorOf = new Map(wanted.filter((w) => w.color).map((w) => [w.name.toLowerCase(), w.color as string]));

  const newRows: NewStream[] = missing.map((w, i) => ({
    realm_id: realm.id,
    name: w.name,
    description: w.description,
    rendered_description: rendered[i] as string,
    ...settings,
    creator_id: actor.user_id,
    can_remove_subscribers_group_id: systemGroupId(realm.id, 'role:administrators'),
    email_token: newEmailToken(),
  }));

  // Every statement below handles all streams at once: a call creating a thousand streams
  // commits in a few round trips, well within its caller's timeout.
  const { reply, notices } = await transaction(deps.pool, async (tx) => {
    let created: StreamRow[];
    try {
      created = await streamStore.insertMany(tx, newRows);
    } catch (e) {
      if (isUniqueViolation(e)) throw new StreamNameTaken();
      throw e;
    }
    const targets = [...authorized, ...created];
    const added = await subscribeAll(tx, targets, users, colorOf);
    const events = new EventBatch();
    await writeEvents(deps, tx, events, { realm, actor: actor.user_id, announce: r.announce, created, targets, users, added });
    tellSubscribedUsers(events, { realm, by: me, created, targets, users, added });
    const notices = {
      messages: events.payloadsOf(subscriptionsEvents.notificationBotMessage),
      announcements: events.payloadsOf(subscriptionsEvents.streamAnnounced),
    };
    await events.write(tx);
    return { reply: summarise(targets, users, added), notices };
  });
  await postNoticesNow(deps, notices);
  if (!r.authorization_errors_fatal) reply.unauthorized = unauthorized.map((s) => s.name);
  return reply;
}

/**
 * Subscribes `users` to `streams` that exist already, in the caller's transaction, with the
 * events a subscribe request writes (no notices from the notification bot); for joins the
 * server makes on its own, such as a new user's default streams. Returns the pairs added.
 */
export async function doSubscribeToExisting(
  deps: SubscriptionsDeps,
  tx: Queryable,
  c: { realm: Realm; actor: number; streams: StreamRow[]; users: readonly DirectoryUser[] },
): Promise<Pair[]> {
  const added = await subscribeAll(tx, c.streams, c.users, new Map());
  const events = new EventBatch();
  await writeEvents(deps, tx, events, { realm: c.realm, actor: c.actor, announce: false, created: [], targets: c.streams, users: c.users, added });
  await events.write(tx);
  return added;
}

/** Activates every (user, stream) pair; new rows get the request's color or the user's next palette color. */
async function subscribeAll(tx: Queryable, streams: readonly StreamRow[], users: readonly DirectoryUser[], colorOf: Map<string, string>): Promise<Pair[]> {
  const userIds = users.map((u) => u.id);
  const streamIds = streams.map((s) => s.id);
  const rows = new Set((await subscriptionStore.listRows(tx, userIds, streamIds)).map((s) => `${s.user_id}:${s.stream_id}`));
  const used = new Map<number, string[]>();
  for (const c of await subscriptionStore.listColors(tx, userIds)) pushTo(used, c.user_id, c.color);
  const subs: NewSubscription[] = [];
  for (const u of users) {
    const fresh = streams.filter((s) => !rows.has(`${u.id}:${s.id}`));
    const palette = pickColors(used.get(u.id) ?? [], fresh.map((s) => s.id));
    for (const s of streams) {
      // Reactivated rows keep their color (the store does not change it).
      const color = colorOf.get(s.name.toLowerCase()) ?? palette.get(s.id) ?? '#c2c2c2';
      subs.push({ user_id: u.id, stream_id: s.id, realm_id: s.realm_id, color });
    }
  }
  // One lock order for every request, so concurrent subscribes cannot deadlock each other.
  subs.sort(byUserThenStream);
  return subscriptionStore.activate(tx, subs);
}

function summarise(streams: readonly StreamRow[], users: readonly DirectoryUser[], added: readonly Pair[]): SubscribeReply {
  const isNew = new Set(added.map((p) => `${p.user_id}:${p.stream_id}`));
  const subscribed: Record<string, string[]> = {};
  const already: Record<string, string[]> = {};
  for (const u of users) {
    for (const s of streams) {
      const into = isNew.has(`${u.id}:${s.id}`) ? subscribed : already;
      (into[u.email] ??= []).push(s.name);
    }
  }
  return { subscribed, already_subscribed: already };
}

/**
 * Zulip's send_messages_for_new_subscribers: the notification bot tells each user whom
 * someone else subscribed which existing streams they are now in (streams this request
 * created are left out, and bots are not told).
 */
function tellSubscribedUsers(events: EventBatch, c: Pick<Changes, 'realm' | 'created' | 'targets' | 'users' | 'added'> & { by: DirectoryUser }): void {
  const created = new Set(c.created.map((s) => s.id));
  const nameOf = new Map(c.targets.map((s) => [s.id, s.name]));
  const batch = randomUUID();
  for (const u of c.users) {
    if (u.id === c.by.id || u.is_bot) continue;
    const names = c.added.filter((p) => p.user_id === u.id && !created.has(p.stream_id)).map((p) => nameOf.get(p.stream_id) as string);
    if (names.length === 0) continue;
    events.domain(subscriptionsEvents.notificationBotMessage, {
      realm_id: c.realm.id,
      key: `subscribed-you:${batch}:${u.id}`,
      to: { type: 'private', user_id: u.id },
      content: subscribedYouMessage({ id: c.by.id, full_name: c.by.full_name }, names),
    });
  }
}

interface Changes {
  realm: Realm;
  actor: number;
  announce: boolean;
  created: StreamRow[];
  targets: StreamRow[];
  users: readonly DirectoryUser[];
  added: Pair[];
}

/**
 * Events in Zulip's order: streams created (to everyone who can see them), streams that new
 * subscribers could not see before, the domain facts, each user's subscription add, then
 * peer_add to everyone else who follows the stream's subscribers.
 */
async function writeEvents(deps: SubscriptionsDeps, tx: Queryable, events: EventBatch, c: Changes): Promise<void> {
  const realmId = c.realm.id;
  const addedTo = new Map<number, number[]>(); // stream id → users newly subscribed
  const addedFor = new Map<number, number[]>(); // user id → streams newly subscribed
  // In user id order, whatever order the database returned the rows in.
  for (const p of [...c.added].sort(byUserThenStream)) {
    pushTo(addedTo, p.stream_id, p.user_id);
    pushTo(addedFor, p.user_id, p.stream_id);
  }
  const streamById = new Map(c.targets.map((s) => [s.id, s]));
  const touched = c.targets.filter((s) => addedTo.has(s.id));
  const subscribersOf = await subscriptionStore.listSubscriberIds(tx, c.targets.map((s) => s.id));
  const people: RealmPeople = await deps.directory.realmPeople(tx, realmId);
  const stats = await streamStatsStore.statsFor(tx, touched.map((s) => s.id), isoDay());
  const roleOf = new Map(c.users.map((u) => [u.id, u.role]));

  for (const s of c.created) {
    events.domain(subscriptionsEvents.streamCreated, toStreamRecord(s));
    if (c.announce) {
      events.domain(subscriptionsEvents.streamAnnounced, {
        realm_id: realmId,
        stream_id: s.id,
        stream_name: s.name,
        creator_id: c.actor,
        invite_only: s.invite_only,
      });
    }
    events.notify(realmId, streamAudience(s, subscribersOf.get(s.id) ?? [], people), streamCreateEvent([toApiStream(s)]));
  }

  // A user newly subscribed to an existing stream they could not see learns of the stream first.
  const createdIds = new Set(c.created.map((s) => s.id));
  for (const [userId, streamIds] of addedFor) {
    const role = roleOf.get(userId) ?? Role.MEMBER;
    const revealed = streamIds.map((id) => streamById.get(id) as StreamRow).filter((s) => !createdIds.has(s.id) && !canSeeStream(role, s, false));
    for (const streams of inChunks(revealed.map((s) => toApiStream(s, stats.get(s.id))))) events.notify(realmId, [userId], streamCreateEvent(streams));
  }

  for (const s of touched) {
    events.domain(subscriptionsEvents.subscribersAdded, { realm_id: realmId, stream_id: s.id, user_ids: addedTo.get(s.id) ?? [] });
  }

  const rows = await subscriptionStore.listRows(tx, [...addedFor.keys()], touched.map((s) => s.id));
  const rowOf = new Map(rows.map((r) => [`${r.user_id}:${r.stream_id}`, r]));
  for (const [userId, streamIds] of addedFor) {
    const subs = streamIds.map((id) => {
      const s = streamById.get(id) as StreamRow;
      const sub = rowOf.get(`${userId}:${id}`) as SubscriptionRow;
      return toApiSubscription(s, sub, { stats: stats.get(id), emailHost: c.realm.host, subscribers: subscribersOf.get(id) ?? [] });
    });
    // Thousands of streams at once go out as several add events (each fits on the bus).
    for (const chunk of inChunks(subs)) events.notify(realmId, [userId], subscriptionAddEvent(chunk));
  }

  for (const s of touched) {
    const altered = addedTo.get(s.id) ?? [];
    events.notify(realmId, peerRecipients(s, subscribersOf.get(s.id) ?? [], people, altered), peerEvent('peer_add', [s.id], altered));
  }
}

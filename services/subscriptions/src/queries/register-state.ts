/**
 * The parts of POST /register's initial state this service owns (api-notes §2.1):
 * `subscription` (subscriptions, unsubscribed, never_subscribed), `stream` (streams),
 * `user_topic`, `muted_topics` and `default_streams`, all read in one snapshot so the
 * events service can drop queued events the state already reflects.
 */
import { withInheritedNotificationSettings, type Actor } from '@zc/shared/contracts';
import { readWithSnapshot, type Queryable } from '@zc/shared/db';
import type { SubscriptionsDeps } from '../deps.js';
import { realmFor, type Realm } from '../actions/directory.js';
import { mutedTopicList } from '../actions/muted-topics.js';
import { isAdminRole, isGuestRole } from '@zc/shared/policy';
import { canSeeStream } from '../lib/policy.js';
import { unixSeconds } from '../lib/stream-view.js';
import { streamStore } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { userTopicStore } from '../store/user-topic-store.js';
import { presentStreams, selectStreams } from './streams.js';
import { readSubscriptions } from './subscriptions.js';

interface Options {
  include_subscribers?: unknown;
  client_capabilities?: unknown;
  event_types?: unknown;
}

export async function getRegisterState(
  deps: SubscriptionsDeps,
  actor: Actor,
  fetch: readonly string[],
  options: Options,
): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const realm = await realmFor(deps, actor);
  const { snapshot, result } = await readWithSnapshot(deps.pool, (q) => readState(deps, q, realm, actor, fetch, options));
  return { snapshot, state: result };
}

async function readState(
  deps: SubscriptionsDeps,
  q: Queryable,
  realm: Realm,
  actor: Actor,
  fetch: readonly string[],
  options: Options,
): Promise<Record<string, unknown>> {
  const want = (t: string) => fetch.includes(t);
  const out: Record<string, unknown> = {};
  const includeSubscribers = options.include_subscribers === true;
  const capabilities = (options.client_capabilities ?? {}) as Record<string, unknown>;

  if (want('subscription')) {
    const view = { includeSubscribers, emailHost: realm.host };
    const subscriptions = await readSubscriptions(q, actor, { ...view, active: true });
    const unsubscribed = await readSubscriptions(q, actor, { ...view, active: false });
    // Subscribers of a private stream one has left are hidden, unless one administers the realm.
    if (includeSubscribers && !isAdminRole(actor.role)) {
      for (const s of unsubscribed) if (s.invite_only) s.subscribers = [];
    }
    // Clients without notification_settings_null cannot take null ("inherit"): they get the default.
    if (capabilities.notification_settings_null !== true) {
      subscriptions.splice(0, subscriptions.length, ...subscriptions.map(withInheritedNotificationSettings));
      unsubscribed.splice(0, unsubscribed.length, ...unsubscribed.map(withInheritedNotificationSettings));
    }
    const known = new Set([...subscriptions, ...unsubscribed].map((s) => s.stream_id as number));
    const never = (await streamStore.listByRealm(q, actor.realm_id)).filter((s) => !known.has(s.id) && canSeeStream(actor.role, s, false));
    const neverSubscribed = await presentStreams(q, never);
    if (includeSubscribers) {
      const subscribersOf = await subscriptionStore.listSubscriberIds(q, never.map((s) => s.id));
      for (const s of neverSubscribed) s.subscribers = subscribersOf.get(s.stream_id as number) ?? [];
    }
    Object.assign(out, { subscriptions, unsubscribed, never_subscribed: neverSubscribed });
  }

  if (want('stream')) {
    const streams = await selectStreams(deps, q, actor, {
      include_public: true,
      include_web_public: true,
      include_subscribed: true,
      include_all_active: isAdminRole(actor.role),
      include_default: false,
      include_owner_subscribed: false,
    });
    out.streams = await presentStreams(q, streams);
  }

  if (want('default_streams')) {
    const ids = isGuestRole(actor.role) ? [] : await streamStore.listDefaultStreamIds(q, actor.realm_id);
    out.realm_default_streams = await presentStreams(q, await streamStore.listByIds(q, actor.realm_id, ids));
  }

  if (want('user_topic')) {
    out.user_topics = (await userTopicStore.listForUser(q, actor.user_id)).map((t) => ({
      stream_id: t.stream_id,
      topic_name: t.topic_name,
      last_updated: unixSeconds(t.last_updated),
      visibility_policy: t.visibility_policy,
    }));
  }

  // Zulip sends the deprecated list only to clients that did not ask for user_topic events.
  const eventTypes = Array.isArray(options.event_types) ? (options.event_types as unknown[]) : null;
  if (want('muted_topics') && (eventTypes === null || !want('user_topic'))) {
    out.muted_topics = await mutedTopicList(q, actor.user_id);
  }
  return out;
}

/**
 * What the server subscribes on its own, as Zulip does at sign-up: a new realm gets its
 * "general" stream, a default stream and its notifications stream (do_create_realm), and every new human user joins the
 * realm's default streams (process_new_human_user), with their recent history. Both run from the users service's
 * domain events (handlers/consumers.ts), so each must be harmless when an event comes twice.
 */
import { messagesInbox, subscriptionsEvents, usersInbox, type RealmRecord, type UserRecord } from '@zc/shared/contracts';
import { isUniqueViolation, transaction } from '@zc/shared/db';
import { systemGroupId } from '@zc/shared/policy';
import type { SubscriptionsDeps } from '../deps.js';
import { streamAudience } from '../lib/audience.js';
import { streamCreateEvent } from '../lib/client-events.js';
import { generalWelcomePosts } from '../lib/general-stream-welcome.js';
import { renderDescription } from '../lib/render-description.js';
import { newEmailToken } from '../lib/stream-email.js';
import { toApiStream, toStreamRecord } from '../lib/stream-view.js';
import { streamStore, type NewStream } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { notifyDefaultStreams } from './default-streams.js';
import { ensureRealm } from './directory.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';
import { doSubscribeToExisting } from './subscribe.js';

/** The stream every new realm starts with; the notification bot's announcements go there too. */
export const GENERAL_STREAM = 'general';
const GENERAL_DESCRIPTION = 'For everyone in the organization: new members join this stream by default.';

/**
 * Creates the new realm's "general" stream as a public default stream (no creator: the
 * server makes it), with Welcome Bot's first posts in it. A realm that has ever had a stream is left alone, so a redelivered
 * event does not bring back a "general" renamed or archived since.
 */
export async function doCreateRealmStreams(deps: SubscriptionsDeps, realm: RealmRecord): Promise<void> {
  if (!deps.settings.newRealmStreams) return;
  const stream: NewStream = {
    realm_id: realm.realm_id,
    name: GENERAL_STREAM,
    description: GENERAL_DESCRIPTION,
    rendered_description: await renderDescription(GENERAL_DESCRIPTION, realm.url),
    invite_only: false,
    is_web_public: false,
    history_public_to_subscribers: true,
    stream_post_policy: 1,
    message_retention_days: null,
    creator_id: null,
    can_remove_subscribers_group_id: systemGroupId(realm.realm_id, 'role:administrators'),
    email_token: newEmailToken(),
  };
  try {
    await transaction(deps.pool, async (tx) => {
      if (await streamStore.realmHasStreams(tx, realm.realm_id)) return;
      const [created] = await streamStore.insertMany(tx, [stream]);
      if (!created) return;
      await streamStore.addDefaultStream(tx, realm.realm_id, created.id);
      await emitDomainEvent(tx, subscriptionsEvents.streamCreated, toStreamRecord(created));
      // Usually nobody yet: the owner's account comes in the next event.
      const people = await deps.directory.realmPeople(tx, realm.realm_id);
      await notifyUsers(tx, realm.realm_id, streamAudience(created, [], people), streamCreateEvent([toApiStream(created)]));
      await notifyDefaultStreams(deps, tx, realm.realm_id);
      // Zulip makes it the realm's notifications stream too; the users service owns that setting.
      await emitDomainEvent(tx, usersInbox.realmNotificationsStream, { realm_id: realm.realm_id, stream_id: created.id });
      for (const [i, post] of generalWelcomePosts(realm.name).entries()) {
        await emitDomainEvent(tx, subscriptionsEvents.notificationBotMessage, {
          realm_id: realm.realm_id,
          key: `general-welcome:${created.id}:${i}`,
          sender: 'welcome-bot',
          to: { type: 'stream', stream_id: created.id, topic: post.topic },
          content: post.content,
        });
      }
    });
  } catch (e) {
    // Someone made a stream of that name at the same moment: the realm has its streams.
    if (!isUniqueViolation(e)) throw e;
  }
}

/**
 * Subscribes a new human user to the realm's default streams (guests too, as Zulip does when
 * no invitation names streams). Bots join nothing: Zulip subscribes only humans at creation.
 * Streams the user has any subscription row for, active or left, are skipped, so a
 * redelivered event neither repeats the events nor undoes a departure.
 */
export async function doSubscribeNewUser(deps: SubscriptionsDeps, user: UserRecord): Promise<void> {
  if (user.is_bot || !user.is_active) return;
  // Most realms in bulk sign-ups (and every test realm) have none: no transaction for them.
  if ((await streamStore.listDefaultStreamIds(deps.pool, user.realm_id)).length === 0) return;
  const realm = await ensureRealm(deps, user.realm_id);
  await transaction(deps.pool, async (tx) => {
    const defaults = await streamStore.listByIds(tx, realm.id, await streamStore.listDefaultStreamIds(tx, realm.id));
    if (defaults.length === 0) return;
    const known = new Set((await subscriptionStore.listRows(tx, [user.user_id], defaults.map((s) => s.id))).map((r) => r.stream_id));
    const streams = defaults.filter((s) => !known.has(s.id)).sort((a, b) => a.id - b.id);
    if (streams.length === 0) return;
    const me = await deps.directory.requireUser(tx, realm.id, user.user_id);
    await doSubscribeToExisting(deps, tx, { realm, actor: user.user_id, streams, users: [me] });
    // Zulip's add_new_user_history: the messages service gives them the recent history of these streams.
    await emitDomainEvent(tx, messagesInbox.newUserHistory, { realm_id: realm.id, user_id: user.user_id, stream_ids: streams.map((s) => s.id) });
  });
}

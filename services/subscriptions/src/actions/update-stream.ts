/**
 * PATCH /streams/{stream_id} (Zulip's update_stream_backend at our feature level): an
 * administrator changes a stream's description, name, access settings, post policy,
 * retention period or can_remove_subscribers_group. Every check runs first, then one
 * transaction changes the row, writes the `stream` update events (with the stream create /
 * delete events of users who gain or lose sight of it), the domain event and the
 * notification bot's notices. Before answering, the messages service's read model gets the
 * new row (a stream made private is closed to non-subscribers on every read path at once),
 * and the notices are posted (post-notices.ts).
 *
 * Unlike Zulip, which applies the settings one after another, a refused setting changes
 * nothing; and a setting given its current value sends no event and no notice.
 */
import { randomUUID } from 'node:crypto';
import { Role, subscriptionsEvents, type Actor, type NotificationBotMessage, type UpdateStreamRequest } from '@zc/shared/contracts';
import { isUniqueViolation, transaction, type Queryable } from '@zc/shared/db';
import type { DirectoryUser } from '@zc/shared/directory';
import { badRequest, organizationAdministratorRequired, organizationOwnerRequired } from '@zc/shared/errors';
import { SYSTEM_GROUPS, canAdministerStreams, hasPolicyPermission, systemGroupId, type SystemGroupName } from '@zc/shared/policy';
import type { SubscriptionsDeps } from '../deps.js';
import { streamAudience } from '../lib/audience.js';
import { streamCreateEvent, streamDeleteEvent, streamUpdateEvent } from '../lib/client-events.js';
import { insufficientPermission, invalidStreamId, webPublicNotEnabled } from '../lib/errors.js';
import { renderDescription } from '../lib/render-description.js';
import { streamEmailAddress } from '../lib/stream-email.js';
import {
  STREAM_EVENTS_TOPIC,
  descriptionNotice,
  permissionNotice,
  postPolicyNotice,
  renameNotice,
  retentionNotice,
  type Person,
} from '../lib/stream-notices.js';
import { asksPermissionChange, permissionPolicyName, proposedPermission, samePermission } from '../lib/stream-permission.js';
import { checkStreamName, normaliseStreamName, parseMessageRetentionDays, streamPostPolicy, POST_POLICY_ADMINS_ONLY } from '../lib/stream-rules.js';
import { isoDay, toApiStream, toStreamRecord } from '../lib/stream-view.js';
import { streamStatsStore } from '../store/stream-stats-store.js';
import { streamStore, type StreamChanges, type StreamRow } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { realmFor, type Realm } from './directory.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';
import { postNoticesNow } from './post-notices.js';
import { syncStreamToMessages } from './read-model-sync.js';

const SETTING = 'can_remove_subscribers_group';

export const streamNameTaken = (name: string) => badRequest(`Channel name '${name}' is already taken.`);

async function isSubscribed(q: Queryable, userId: number, streamId: number): Promise<boolean> {
  return (await subscriptionStore.find(q, userId, streamId))?.active === true;
}

/**
 * Zulip's access_stream_for_delete_or_update: administrators reach every stream; anyone else
 * is refused, with "Invalid channel ID" for a private stream they are not subscribed to (so
 * its existence does not leak).
 */
export async function streamForAdministration(q: Queryable, actor: Actor, streamId: number): Promise<{ stream: StreamRow; subscribed: boolean }> {
  const stream = await streamStore.findById(q, actor.realm_id, streamId);
  if (!stream) throw invalidStreamId();
  const subscribed = await isSubscribed(q, actor.user_id, stream.id);
  if (canAdministerStreams(actor)) return { stream, subscribed };
  if (stream.invite_only && !subscribed) throw invalidStreamId();
  throw organizationAdministratorRequired();
}

/** Zulip's access_user_group_for_setting for can_remove_subscribers_group: a system group other than internet, owners, nobody. */
async function checkRemoveSubscribersGroup(deps: SubscriptionsDeps, q: Queryable, realmId: number, groupId: number): Promise<void> {
  const position = groupId - systemGroupId(realmId, SYSTEM_GROUPS[0].name);
  const system = position >= 0 && position < SYSTEM_GROUPS.length ? (SYSTEM_GROUPS[position] as { name: SystemGroupName }) : undefined;
  if (!system) {
    const { groupsById } = await deps.directory.groupContext(q, realmId);
    if (groupsById.has(groupId)) throw badRequest(`'${SETTING}' must be a system user group.`);
    throw badRequest('Invalid user group');
  }
  if (system.name === 'role:internet' || system.name === 'role:owners' || system.name === 'role:nobody') {
    throw badRequest(`'${SETTING}' setting cannot be set to '${system.name}' group.`);
  }
}

interface Plan {
  changes: StreamChanges;
  /** Effective retention periods before and after, for the notice (null: no change). */
  retention: { old: number; new: number } | null;
}

/** Checks every requested setting against the stream as it is now; returns what changes. */
async function plan(deps: SubscriptionsDeps, q: Queryable, realm: Realm, r: UpdateStreamRequest, stream: StreamRow, subscribed: boolean): Promise<Plan> {
  const { actor } = r;
  const changes: StreamChanges = {};
  let retention: Plan['retention'] = null;

  const permissionAsked = asksPermissionChange(r);
  const permission = permissionAsked ? proposedPermission(stream, r) : undefined;
  if (r.is_private !== undefined) {
    if (r.is_private && (await streamStore.listDefaultStreamIds(q, realm.id)).includes(stream.id)) {
      throw badRequest('Default streams cannot be made private.');
    }
    // Even administrators must have content access (be subscribed to a private stream) to change its privacy.
    if (stream.invite_only && !subscribed) throw invalidStreamId();
  }
  if (r.is_web_public === true) {
    if (!deps.settings.webPublicStreamsEnabled || !realm.settings.enable_spectator_access) throw webPublicNotEnabled();
    const me = await deps.directory.requireUser(q, realm.id, actor.user_id);
    if (!hasPolicyPermission({ role: actor.role, date_joined: me.date_joined }, realm.settings.create_web_public_stream_policy, realm.settings.waiting_period_threshold)) {
      throw insufficientPermission();
    }
  }

  if (r.message_retention_days !== undefined) {
    if (actor.role !== Role.OWNER) throw organizationOwnerRequired();
    const days = parseMessageRetentionDays(r.message_retention_days);
    if (days !== stream.message_retention_days) {
      changes.message_retention_days = days;
      const realmDays = realm.settings.message_retention_days as number;
      retention = { old: stream.message_retention_days ?? realmDays, new: days ?? realmDays };
    }
  }

  if (r.description !== undefined) {
    // Descriptions are one line (Zulip replaces newlines with spaces).
    const description = r.description.replace(/\n/g, ' ');
    if (description !== stream.description) {
      changes.description = description;
      changes.rendered_description = await renderDescription(description, realm.url);
    }
  }

  if (r.new_name !== undefined) {
    const name = normaliseStreamName(r.new_name);
    if (name === stream.name) throw badRequest('Channel already has that name!');
    checkStreamName(name);
    // A change of case only is the same stream's name; anything else must be free.
    if (name.toLowerCase() !== stream.name.toLowerCase() && (await streamStore.findByName(q, realm.id, name))) throw streamNameTaken(name);
    changes.name = name;
  }

  if (r.stream_post_policy !== undefined || r.is_announcement_only !== undefined) {
    const policy = r.stream_post_policy !== undefined ? streamPostPolicy(r.stream_post_policy, undefined) : r.is_announcement_only ? POST_POLICY_ADMINS_ONLY : 1;
    if (policy !== stream.stream_post_policy) changes.stream_post_policy = policy;
  }

  if (permission && !samePermission(permission, stream)) Object.assign(changes, permission);

  if (r.can_remove_subscribers_group_id !== undefined) {
    // Administrators cannot change this for a private stream they are not subscribed to.
    if (stream.invite_only && !subscribed) throw invalidStreamId();
    await checkRemoveSubscribersGroup(deps, q, realm.id, r.can_remove_subscribers_group_id);
    if (r.can_remove_subscribers_group_id !== stream.can_remove_subscribers_group_id) {
      changes.can_remove_subscribers_group_id = r.can_remove_subscribers_group_id;
    }
  }
  return { changes, retention };
}

export async function checkUpdateStream(deps: SubscriptionsDeps, r: UpdateStreamRequest): Promise<Record<string, never>> {
  const { actor } = r;
  const realm = await realmFor(deps, actor);
  const { stream: seen, subscribed } = await streamForAdministration(deps.pool, actor, r.stream_id);
  // Checked before the transaction too, so a refused request takes no lock.
  const first = await plan(deps, deps.pool, realm, r, seen, subscribed);
  if (Object.keys(first.changes).length === 0) return {};
  const me = await deps.directory.requireUser(deps.pool, realm.id, actor.user_id);

  const result = await transaction(deps.pool, async (tx) => {
    const before = await streamStore.lockById(tx, realm.id, r.stream_id);
    if (!before) throw invalidStreamId();
    // Planned again on the locked row: a concurrent change may have come first.
    const { changes, retention } = await plan(deps, tx, realm, r, before, subscribed);
    if (Object.keys(changes).length === 0) return undefined;
    let after: StreamRow | undefined;
    try {
      after = await streamStore.update(tx, realm.id, before.id, changes);
    } catch (e) {
      if (isUniqueViolation(e) && changes.name !== undefined) throw streamNameTaken(changes.name);
      throw e;
    }
    if (!after) throw invalidStreamId();
    const notices = await writeEvents(deps, tx, { realm, by: me, before, after, retention });
    return { after, notices, subscriberIds: (await subscriptionStore.listSubscriberIds(tx, [after.id])).get(after.id) ?? [] };
  });
  if (!result) return {};
  await syncStreamToMessages(deps, result.after, result.subscriberIds);
  await postNoticesNow(deps, { messages: result.notices, announcements: [] });
  return {};
}

interface Change {
  realm: Realm;
  by: DirectoryUser;
  before: StreamRow;
  after: StreamRow;
  retention: Plan['retention'];
}

/**
 * Events in Zulip's order of the settings (retention, description, name, post policy,
 * access, group), each to those who can see the stream; an access change first tells those
 * losing sight of the stream that it is gone and those gaining it that it exists. Then the
 * domain event, then the notices in "stream events".
 */
async function writeEvents(deps: SubscriptionsDeps, tx: Queryable, c: Change): Promise<NotificationBotMessage[]> {
  const { before, after, realm } = c;
  const subscribers = (await subscriptionStore.listSubscriberIds(tx, [after.id])).get(after.id) ?? [];
  const people = await deps.directory.realmPeople(tx, realm.id);
  const oldAudience = streamAudience(before, subscribers, people);
  const audience = streamAudience(after, subscribers, people);
  // Events carry the stream's name as it is when each applies (the old one up to the rename).
  let name = before.name;
  const update = (property: string, value: unknown, extra: Record<string, unknown> = {}) =>
    notifyUsers(tx, realm.id, audience, streamUpdateEvent(after.id, name, property, value, extra));

  if (after.message_retention_days !== before.message_retention_days) await update('message_retention_days', after.message_retention_days);
  if (after.description !== before.description) await update('description', after.description, { rendered_description: after.rendered_description });
  if (after.name !== before.name) {
    // Zulip sends the new email address first, then the name, both keyed by the old name.
    await update('email_address', streamEmailAddress(after.name, after.email_token, realm.host));
    await update('name', after.name);
    name = after.name;
  }
  if (after.stream_post_policy !== before.stream_post_policy) {
    // The deprecated boolean first, for clients that still read it.
    await update('is_announcement_only', after.stream_post_policy === POST_POLICY_ADMINS_ONLY);
    await update('stream_post_policy', after.stream_post_policy);
  }
  if (!samePermission(before, after)) {
    const now = new Set(audience);
    const was = new Set(oldAudience);
    const losing = oldAudience.filter((id) => !now.has(id));
    const gaining = audience.filter((id) => !was.has(id));
    // Users who keep a former subscription still see it among `unsubscribed`: they get the update instead.
    const formerSubscribers = new Set((await subscriptionStore.listRows(tx, losing, [after.id])).map((s) => s.user_id));
    await notifyUsers(tx, realm.id, losing.filter((id) => !formerSubscribers.has(id)), streamDeleteEvent([toApiStream(before)]));
    if (gaining.length > 0) {
      const stats = await streamStatsStore.statsFor(tx, [after.id], isoDay());
      await notifyUsers(tx, realm.id, gaining, streamCreateEvent([toApiStream(after, stats.get(after.id))]));
    }
    const event = streamUpdateEvent(after.id, name, 'invite_only', after.invite_only, {
      history_public_to_subscribers: after.history_public_to_subscribers,
      is_web_public: after.is_web_public,
    });
    const gained = new Set(gaining);
    await notifyUsers(tx, realm.id, [...audience.filter((id) => !gained.has(id)), ...formerSubscribers].sort((a, b) => a - b), event);
  }
  if (after.can_remove_subscribers_group_id !== before.can_remove_subscribers_group_id) {
    await update('can_remove_subscribers_group_id', after.can_remove_subscribers_group_id);
  }

  await emitDomainEvent(tx, subscriptionsEvents.streamUpdated, toStreamRecord(after));
  return writeNotices(tx, c);
}

/** The notification bot's notices in the stream's "stream events" topic (Zulip 6's texts), into the outbox; returns them. */
async function writeNotices(tx: Queryable, c: Change): Promise<NotificationBotMessage[]> {
  const { before, after } = c;
  const by: Person = { id: c.by.id, full_name: c.by.full_name };
  const notices: string[] = [];
  if (c.retention) notices.push(retentionNotice(by, c.retention.old, c.retention.new));
  if (after.description !== before.description) notices.push(descriptionNotice(by, before.description, after.description));
  if (after.name !== before.name) notices.push(renameNotice(by, before.name, after.name));
  if (after.stream_post_policy !== before.stream_post_policy) notices.push(postPolicyNotice(by, before.stream_post_policy, after.stream_post_policy));
  const oldPolicy = permissionPolicyName(before);
  const newPolicy = permissionPolicyName(after);
  if (oldPolicy !== newPolicy) notices.push(permissionNotice(by, oldPolicy, newPolicy));
  const batch = randomUUID();
  const messages = notices.map((content, i): NotificationBotMessage => ({
    realm_id: c.realm.id,
    key: `stream-notice:${after.id}:${batch}:${i}`,
    to: { type: 'stream', stream_id: after.id, topic: STREAM_EVENTS_TOPIC },
    content,
  }));
  for (const m of messages) await emitDomainEvent(tx, subscriptionsEvents.notificationBotMessage, m);
  return messages;
}

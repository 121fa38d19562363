/**
 * DELETE /streams/{stream_id} (Zulip's do_deactivate_stream): an administrator archives a
 * stream. Its messages are kept, but the stream leaves every listing and /register, all its
 * subscriptions end, and — as Zulip does — it becomes private and takes the name
 * `<7 hex digits>!DEACTIVATED:<old name>`, so the old name is free for a new stream at once
 * and nobody reads the old messages through the stream any more.
 */
import { createHash } from 'node:crypto';
import { LIMITS, subscriptionsEvents, usersInbox, type Actor } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import type { SubscriptionsDeps } from '../deps.js';
import { streamAudience } from '../lib/audience.js';
import { streamDeleteEvent, subscriptionRemoveEvent } from '../lib/client-events.js';
import { invalidStreamId } from '../lib/errors.js';
import { toApiStream, toStreamRecord } from '../lib/stream-view.js';
import { streamStore, type StreamRow } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { defaultStreamObjects } from './default-streams.js';
import { realmFor } from './directory.js';
import { emitDomainEvent, notifyUsers } from './outbox.js';
import { syncStreamToMessages } from './read-model-sync.js';
import { streamForAdministration } from './update-stream.js';

/** Zulip's archived name: a hash of the id keeps two archived streams of one name apart. */
export function archivedStreamName(streamId: number, name: string): string {
  const hash = createHash('sha512').update(String(streamId)).digest('hex').slice(0, 7);
  return [...`${hash}!DEACTIVATED:${name}`].slice(0, LIMITS.maxStreamNameLength).join('');
}

export async function checkArchiveStream(deps: SubscriptionsDeps, r: { actor: Actor; stream_id: number }): Promise<Record<string, never>> {
  const { actor } = r;
  await realmFor(deps, actor);
  await streamForAdministration(deps.pool, actor, r.stream_id);
  const archived = await transaction(deps.pool, async (tx) => {
    const before = await streamStore.lockById(tx, actor.realm_id, r.stream_id);
    if (!before) throw invalidStreamId();
    return doArchiveStream(deps, tx, before);
  });
  await syncStreamToMessages(deps, archived, []);
  return {};
}

/**
 * Archives `before`, a stream the caller's transaction holds locked (lockById), and writes
 * its events; answers the archived row, which the caller syncs to the messages service once
 * the transaction commits. `formerSubscribers`, who left it earlier in the same transaction,
 * are told it is gone too, so their stream lists match a fresh /register.
 */
export async function doArchiveStream(deps: SubscriptionsDeps, tx: Queryable, before: StreamRow, formerSubscribers: readonly number[] = []): Promise<StreamRow> {
  const realmId = before.realm_id;
  // Who could see the stream, read before anyone is unsubscribed.
  const subscribersBefore = (await subscriptionStore.listSubscriberIds(tx, [before.id])).get(before.id) ?? [];
  const people = await deps.directory.realmPeople(tx, realmId);
  const audience = streamAudience(before, [...subscribersBefore, ...formerSubscribers], people);
  const removed = await subscriptionStore.deactivateStream(tx, before.id);
  const wasDefault = await streamStore.removeDefaultStream(tx, realmId, before.id);
  const after = await streamStore.update(tx, realmId, before.id, {
    name: archivedStreamName(before.id, before.name),
    invite_only: true,
    is_archived: true,
  });
  if (!after) throw invalidStreamId();
  const defaults = wasDefault ? await defaultStreamObjects(tx, realmId) : [];
  await writeEvents(tx, { before, after, audience, removed, ...(wasDefault ? { defaultStreams: { to: people.members, streams: defaults } } : {}) });
  return after;
}

interface Archival {
  before: StreamRow;
  after: StreamRow;
  audience: number[];
  removed: number[];
  /** When the stream was a default stream: the realm's default streams now, for its non-guests. */
  defaultStreams?: { to: number[]; streams: Array<Record<string, unknown>> };
}

/**
 * The domain facts (subscribers removed, the stream's new row), each former subscriber's
 * subscription remove, then the stream delete to everyone who could see it, with the stream
 * as they knew it (Zulip sends the old name and privacy).
 */
async function writeEvents(tx: Queryable, a: Archival): Promise<void> {
  const realmId = a.before.realm_id;
  if (a.removed.length > 0) {
    await emitDomainEvent(tx, subscriptionsEvents.subscribersRemoved, { realm_id: realmId, stream_id: a.before.id, user_ids: a.removed });
  }
  await emitDomainEvent(tx, subscriptionsEvents.streamUpdated, toStreamRecord(a.after));
  // The users service owns the realm settings that may name it (notifications streams).
  await emitDomainEvent(tx, usersInbox.streamArchived, { realm_id: realmId, stream_id: a.before.id });
  await notifyUsers(tx, realmId, a.removed, subscriptionRemoveEvent([{ stream_id: a.before.id, name: a.before.name }]));
  await notifyUsers(tx, realmId, a.audience, streamDeleteEvent([toApiStream(a.before)]));
  if (a.defaultStreams) {
    await notifyUsers(tx, realmId, a.defaultStreams.to, { type: 'default_streams', default_streams: a.defaultStreams.streams });
  }
}

/**
 * Who gets the events about an existing message (reactions, deletion): Zulip's rule —
 * everyone with a row for it, plus the stream's subscribers when its history is public to
 * them — narrowed to those who may read it now, as strictly as the read paths are
 * (queries/narrow-plan.ts): a leftover row of a private stream someone left, or a guest's
 * row of a stream they left, reaches no one (CVE-2024-27286).
 */
import { isGuest } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { editStore } from '../store/edit-store.js';
import type { MessageRow } from '../store/message-store.js';
import { directoryRows, readModelStore, type StreamRow } from '../store/read-model-store.js';

export interface MessageAudience {
  userIds: number[];
  /** A public stream's message: all_public_streams queues may get the event too. */
  publicStream: boolean;
}

export async function messageAudience(q: Queryable, realmId: number, message: Pick<MessageRow, 'id' | 'stream_id'>): Promise<MessageAudience> {
  return messagesAudience(q, realmId, message.stream_id, [message.id]);
}

/** The same, for messages of one conversation (a stream's, or direct messages when `streamId` is null). */
export async function messagesAudience(q: Queryable, realmId: number, streamId: number | null, messageIds: readonly number[]): Promise<MessageAudience> {
  const holders = await editStore.usersWithRows(q, messageIds);
  if (streamId === null) return { userIds: holders.sort((a, b) => a - b), publicStream: false };
  const stream = await readModelStore.streamById(q, realmId, streamId);
  if (!stream) return { userIds: [], publicStream: false };
  const subscribers = await readModelStore.subscriberIds(q, stream.id);
  const audience = await readersOf(q, realmId, stream, holders, subscribers);
  if (stream.history_public_to_subscribers) for (const id of subscribers) audience.add(id);
  return { userIds: [...audience].sort((a, b) => a - b), publicStream: !stream.invite_only };
}

/**
 * Of `holderIds` (users with a row for a message of `stream`), those who may read it now:
 * subscribers, and on a public stream anyone but a guest. The one rule every event about an
 * existing message is filtered by (reactions, deletion, edits).
 */
export async function readersOf(
  q: Queryable,
  realmId: number,
  stream: Pick<StreamRow, 'id' | 'invite_only'>,
  holderIds: readonly number[],
  subscriberIds?: readonly number[],
): Promise<Set<number>> {
  const subscribers = new Set(subscriberIds ?? (await readModelStore.subscriberIds(q, stream.id)));
  const readers = new Set(holderIds.filter((id) => subscribers.has(id)));
  if (!stream.invite_only) {
    // A public stream's message stays readable to non-guests who are not subscribed.
    const others = holderIds.filter((id) => !subscribers.has(id));
    for (const u of await directoryRows.usersByIds(q, realmId, others)) if (!isGuest(u)) readers.add(u.id);
  }
  return readers;
}

/**
 * The client events this service produces (api-notes §2.3), built as plain objects for
 * eventsInbox.notify. Recipients are chosen by the actions.
 */
import type { UserTopicRow } from '../store/user-topic-store.js';
import { unixSeconds } from './stream-view.js';

export type ClientEvent = Record<string, unknown>;

/**
 * Bytes of JSON one event's list may take before the rest goes into another event of the
 * same type and op. An event must fit in one NATS message (1 MiB, gzipped when large; see
 * `addToOutbox`), and a single subscribe call can add thousands of streams with their
 * descriptions and subscriber lists. Clients apply each `add` in turn, so several events
 * leave them in the same state as one.
 */
export const EVENT_LIST_BUDGET_BYTES = 256 * 1024;

/** `items` in order, cut into runs whose JSON stays within `budget` bytes (one item at least). */
export function inChunks<T>(items: readonly T[], budget = EVENT_LIST_BUDGET_BYTES): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item)) + 1;
    if (current.length > 0 && bytes + size > budget) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

export const streamCreateEvent = (streams: Array<Record<string, unknown>>): ClientEvent => ({ type: 'stream', op: 'create', streams });

/**
 * A stream is gone for the recipients (archived, or no longer visible to them): Zulip's
 * full stream objects under `streams`, and `stream_ids` as later clients read it.
 */
export const streamDeleteEvent = (streams: Array<Record<string, unknown>>): ClientEvent => ({
  type: 'stream',
  op: 'delete',
  streams,
  stream_ids: streams.map((s) => s.stream_id as number),
});

/** One setting of a stream changed; `name` is the stream's name as the recipients know it. */
export const streamUpdateEvent = (streamId: number, name: string, property: string, value: unknown, extra: Record<string, unknown> = {}): ClientEvent => ({
  type: 'stream',
  op: 'update',
  stream_id: streamId,
  name,
  property,
  value,
  ...extra,
});

export const subscriptionAddEvent = (subscriptions: Array<Record<string, unknown>>): ClientEvent => ({
  type: 'subscription',
  op: 'add',
  subscriptions,
});

export const subscriptionRemoveEvent = (streams: Array<{ stream_id: number; name: string }>): ClientEvent => ({
  type: 'subscription',
  op: 'remove',
  subscriptions: streams.map((s) => ({ name: s.name, stream_id: s.stream_id })),
});

/** peer_add / peer_remove with the plural fields of feature level 35 and later. */
export const peerEvent = (op: 'peer_add' | 'peer_remove', streamIds: readonly number[], userIds: readonly number[]): ClientEvent => ({
  type: 'subscription',
  op,
  stream_ids: [...streamIds].sort((a, b) => a - b),
  user_ids: [...userIds].sort((a, b) => a - b),
});

export const subscriptionUpdateEvent = (streamId: number, property: string, value: unknown): ClientEvent => ({
  type: 'subscription',
  op: 'update',
  stream_id: streamId,
  property,
  value,
});

export const userTopicEvent = (t: Pick<UserTopicRow, 'stream_id' | 'topic_name' | 'last_updated'>, visibilityPolicy: number): ClientEvent => ({
  type: 'user_topic',
  stream_id: t.stream_id,
  topic_name: t.topic_name,
  last_updated: unixSeconds(t.last_updated),
  visibility_policy: visibilityPolicy,
});

/** The legacy event: the user's whole muted list as [stream name, topic, timestamp]. */
export const mutedTopicsEvent = (muted: Array<[string, string, number]>): ClientEvent => ({ type: 'muted_topics', muted_topics: muted });

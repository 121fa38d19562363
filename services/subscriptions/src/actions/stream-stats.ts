/**
 * Stream statistics from the messages service's message.sent events (spec 2.5's
 * first_message_id and stream_weekly_traffic; its relay publishes runs of them as one
 * messages.sent), and first_message_id after moves (messages.moved) and deletions
 * (stream_messages.deleted). Each message counts once: a redelivered event (the service stopped
 * between commit and acknowledgement) finds its message id already counted. A first_message_id
 * changed by a move or a deletion is announced as a `stream` update event. Zulip changes the
 * value (check_update_first_message_id) but sends that event only from feature level 256; we
 * send it at our level too, since without it a client's stream list stops matching a fresh
 * /register, and clients apply a stream update of any property alike.
 */
import type { DeliveredArgs, EventMeta } from '@zc/shared/bus';
import { messagesEvents, type MessageSent, type MessagesMoved, type StreamMessagesDeleted } from '@zc/shared/contracts';
import { transaction, type Queryable } from '@zc/shared/db';
import type { SubscriptionsDeps } from '../deps.js';
import { isoDay } from '../lib/stream-view.js';
import { streamAudience } from '../lib/audience.js';
import { streamUpdateEvent } from '../lib/client-events.js';
import { streamStatsStore, TRAFFIC_WINDOW_DAYS, type FirstMessageChange } from '../store/stream-stats-store.js';
import { streamStore } from '../store/stream-store.js';
import { subscriptionStore } from '../store/subscription-store.js';
import { notifyUsers } from './outbox.js';

const DAY_MS = 24 * 3600 * 1000;

let lastPrunedDay = '';

/** Counts the messages of a batch of message.sent events (direct messages have no stream). */
export async function recordMessagesSent(deps: SubscriptionsDeps, sent: readonly MessageSent[]): Promise<void> {
  const inStreams = sent.flatMap((m) =>
    m.stream_id === null ? [] : [{ realmId: m.realm_id, streamId: m.stream_id, messageId: m.message_id, day: isoDay(new Date(m.timestamp * 1000)) }],
  );
  await streamStatsStore.recordMessages(deps.pool, inStreams);
  const today = isoDay();
  if (today !== lastPrunedDay) {
    lastPrunedDay = today;
    await streamStatsStore.pruneBefore(deps.pool, isoDay(new Date(Date.now() - (TRAFFIC_WINDOW_DAYS + 1) * DAY_MS)));
  }
}

/**
 * Tells everyone whose lists show the stream (its audience, and former subscribers, who see
 * it among `unsubscribed`) its new first_message_id. An archived stream is in nobody's list.
 */
async function announceFirstMessageIds(deps: SubscriptionsDeps, tx: Queryable, realmId: number, changes: readonly FirstMessageChange[]): Promise<void> {
  for (const c of changes) {
    const stream = await streamStore.findById(tx, realmId, c.stream_id);
    if (!stream || stream.is_archived) continue;
    const subscribers = (await subscriptionStore.listSubscriberIds(tx, [stream.id])).get(stream.id) ?? [];
    const former = await subscriptionStore.listFormerSubscriberIds(tx, stream.id);
    const people = await deps.directory.realmPeople(tx, realmId);
    const to = [...new Set([...streamAudience(stream, subscribers, people), ...former])].sort((a, b) => a - b);
    await notifyUsers(tx, realmId, to, streamUpdateEvent(stream.id, stream.name, 'first_message_id', c.first_message_id));
  }
}

export async function recordMessagesMoved(deps: SubscriptionsDeps, m: MessagesMoved): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    const changes = await streamStatsStore.recordMove(tx, m.realm_id, m);
    await announceFirstMessageIds(deps, tx, m.realm_id, changes);
  });
}

export async function recordStreamMessagesDeleted(deps: SubscriptionsDeps, d: StreamMessagesDeleted): Promise<void> {
  await transaction(deps.pool, async (tx) => {
    if (!(await streamStatsStore.recordDeletion(tx, d.stream_id, d.message_ids, d.first_message_id))) return;
    await announceFirstMessageIds(deps, tx, d.realm_id, [{ stream_id: d.stream_id, first_message_id: d.first_message_id }]);
  });
}

/** The messages service's events the statistics follow. */
export const STREAM_STATS_EVENTS = [messagesEvents.messageSent, messagesEvents.messagesSent, messagesEvents.messagesMoved, messagesEvents.streamMessagesDeleted] as const;

/**
 * A batch of the consumer's events, in order: each run of message.sent events is counted in
 * one statement, and a move or a deletion is applied where it falls between them.
 */
export async function applyStreamStatsEvents(deps: SubscriptionsDeps, events: ReadonlyArray<DeliveredArgs<typeof STREAM_STATS_EVENTS, EventMeta>>): Promise<void> {
  let run: MessageSent[] = [];
  for (const e of events) {
    switch (e[0]) {
      case messagesEvents.messageSent.subject:
        run.push(e[1]);
        break;
      case messagesEvents.messagesSent.subject:
        run.push(...e[1].sent);
        break;
      case messagesEvents.messagesMoved.subject:
        if (run.length > 0) await recordMessagesSent(deps, run);
        run = [];
        await recordMessagesMoved(deps, e[1]);
        break;
      case messagesEvents.streamMessagesDeleted.subject:
        if (run.length > 0) await recordMessagesSent(deps, run);
        run = [];
        await recordStreamMessagesDeleted(deps, e[1]);
        break;
      default:
        break;
    }
  }
  if (run.length > 0) await recordMessagesSent(deps, run);
}

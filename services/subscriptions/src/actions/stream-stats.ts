/**
 * Stream statistics from the messages service's message.sent events (spec 2.5's
 * first_message_id and stream_weekly_traffic), and first_message_id after moves
 * (messages.moved). Each message counts once: a redelivered event (the service stopped
 * between commit and acknowledgement) finds its message id already counted.
 */
import type { DeliveredArgs, EventMeta } from '@zc/shared/bus';
import { messagesEvents, type MessageSent, type MessagesMoved } from '@zc/shared/contracts';
import type { SubscriptionsDeps } from '../deps.js';
import { isoDay } from '../lib/stream-view.js';
import { streamStatsStore, TRAFFIC_WINDOW_DAYS } from '../store/stream-stats-store.js';

const DAY_MS = 24 * 3600 * 1000;

let lastPrunedDay = '';

export async function recordMessageSent(deps: SubscriptionsDeps, m: MessageSent): Promise<void> {
  const streamId = m.stream_id;
  if (streamId === null) return;
  // A stream this service does not know (another realm's id, or deleted) gets no statistics.
  await streamStatsStore.recordMessage(deps.pool, m.realm_id, streamId, m.message_id, isoDay(new Date(m.timestamp * 1000)));
  const today = isoDay();
  if (today !== lastPrunedDay) {
    lastPrunedDay = today;
    await streamStatsStore.pruneBefore(deps.pool, isoDay(new Date(Date.now() - (TRAFFIC_WINDOW_DAYS + 1) * DAY_MS)));
  }
}

export async function recordMessagesMoved(deps: SubscriptionsDeps, m: MessagesMoved): Promise<void> {
  await streamStatsStore.recordMove(deps.pool, m.realm_id, m);
}

/** The messages service's events the statistics follow. */
export const STREAM_STATS_EVENTS = [messagesEvents.messageSent, messagesEvents.messagesMoved] as const;

export async function applyStreamStatsEvent(deps: SubscriptionsDeps, ...[subject, payload]: DeliveredArgs<typeof STREAM_STATS_EVENTS, EventMeta>): Promise<void> {
  switch (subject) {
    case messagesEvents.messageSent.subject:
      return recordMessageSent(deps, payload);
    case messagesEvents.messagesMoved.subject:
      return recordMessagesMoved(deps, payload);
    default:
      return undefined;
  }
}

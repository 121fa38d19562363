/**
 * Stream statistics from the messages service's message.sent events (spec 2.5's
 * first_message_id and stream_weekly_traffic; its relay publishes runs of them as one
 * messages.sent), and first_message_id after moves (messages.moved). Each message counts once: a redelivered event (the service stopped
 * between commit and acknowledgement) finds its message id already counted.
 */
import type { DeliveredArgs, EventMeta } from '@zc/shared/bus';
import { messagesEvents, type MessageSent, type MessagesMoved } from '@zc/shared/contracts';
import type { SubscriptionsDeps } from '../deps.js';
import { isoDay } from '../lib/stream-view.js';
import { streamStatsStore, TRAFFIC_WINDOW_DAYS } from '../store/stream-stats-store.js';

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

export async function recordMessagesMoved(deps: SubscriptionsDeps, m: MessagesMoved): Promise<void> {
  await streamStatsStore.recordMove(deps.pool, m.realm_id, m);
}

/** The messages service's events the statistics follow. */
export const STREAM_STATS_EVENTS = [messagesEvents.messageSent, messagesEvents.messagesSent, messagesEvents.messagesMoved] as const;

/**
 * A batch of the consumer's events, in order: each run of message.sent events is counted in
 * one statement, and a move is applied where it falls between them.
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
      default:
        break;
    }
  }
  if (run.length > 0) await recordMessagesSent(deps, run);
}

/**
 * Stream statistics from the messages service's message.sent events (spec 2.5's
 * first_message_id and stream_weekly_traffic). Counts are at-least-once: a redelivered event
 * (the service stopped between commit and acknowledgement) counts twice, which a weekly
 * average tolerates; first_message_id is exact.
 */
import type { MessageSent } from '@zc/shared/contracts';
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

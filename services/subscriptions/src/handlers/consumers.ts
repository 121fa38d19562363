/**
 * Domain events this service consumes: the users service's realms and users (its copy of
 * the directory, @zc/shared/directory) and the messages service's sent messages (stream
 * statistics). Durable consumers: a restarted replica resumes where the group left off.
 */
import type { Bus } from '@zc/shared/bus';
import { STREAM_STATS_EVENTS, applyStreamStatsEvents } from '../actions/stream-stats.js';
import type { SubscriptionsDeps } from '../deps.js';

/** Starts the durable consumers; the bus stops them when it closes. */
export async function startConsumers(bus: Bus, deps: SubscriptionsDeps): Promise<void> {
  await deps.directory.consume('subscriptions-directory');
  // Batched: one statement per run of waiting message.sent events rather than one per message sent.
  // Statistics nobody waits for: sends a few milliseconds apart are counted in one statement
  // (at 100 messages/s this consumer's writes and acknowledgements were one per message).
  await bus.consumeBatched(STREAM_STATS_EVENTS, { durable: 'subscriptions-stream-stats', lingerMs: 100 }, (events) => applyStreamStatsEvents(deps, events));
}

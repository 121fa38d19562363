/**
 * Domain events this service consumes: the users service's realms and users (its copy of
 * the directory, @zc/shared/directory, which also makes a new realm's streams and a new
 * user's subscriptions) and the messages service's sent messages (stream
 * statistics). Durable consumers: a restarted replica resumes where the group left off.
 */
import type { Bus } from '@zc/shared/bus';
import { usersEvents } from '@zc/shared/contracts';
import { DIRECTORY_EVENTS } from '@zc/shared/directory';
import { doCreateRealmStreams, doSubscribeNewUser } from '../actions/initial-subscriptions.js';
import { STREAM_STATS_EVENTS, applyStreamStatsEvents } from '../actions/stream-stats.js';
import type { SubscriptionsDeps } from '../deps.js';

/** Starts the durable consumers; the bus stops them when it closes. */
export async function startConsumers(bus: Bus, deps: SubscriptionsDeps): Promise<void> {
  // The directory's own durable, with what the server subscribes on its own after each copy.
  await bus.consume(DIRECTORY_EVENTS, { durable: 'subscriptions-directory' }, async (...e) => {
    await deps.directory.apply(e);
    if (e[0] === usersEvents.realmCreated.subject) await doCreateRealmStreams(deps, e[1]);
    if (e[0] === usersEvents.userCreated.subject) await doSubscribeNewUser(deps, e[1]);
  });
  // Batched: one statement per run of waiting message.sent events rather than one per message sent.
  // Statistics nobody waits for: sends a few milliseconds apart are counted in one statement
  // (at 100 messages/s this consumer's writes and acknowledgements were one per message).
  await bus.consumeBatched(STREAM_STATS_EVENTS, { durable: 'subscriptions-stream-stats', lingerMs: 100 }, (events) => applyStreamStatsEvents(deps, events));
}

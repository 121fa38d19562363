/**
 * Domain events this service consumes: the users service's realms and users (the read
 * model in actions/directory.ts) and the messages service's sent messages (stream
 * statistics). Durable consumers: a restarted replica resumes where the group left off.
 */
import type { Bus } from '@zc/shared/bus';
import { messagesEvents, usersEvents, type MessageSent, type RealmRecord, type UserRecord } from '@zc/shared/contracts';
import { applyRealmRecord, applyUserRecord } from '../actions/directory.js';
import { recordMessageSent } from '../actions/stream-stats.js';
import type { SubscriptionsDeps } from '../deps.js';

/** Starts the durable consumers; the bus stops them when it closes. */
export async function startConsumers(bus: Bus, deps: SubscriptionsDeps): Promise<void> {
  const realmSubjects = new Set([usersEvents.realmCreated.subject, usersEvents.realmUpdated.subject]);
  await bus.consume(
    [usersEvents.realmCreated, usersEvents.realmUpdated, usersEvents.userCreated, usersEvents.userUpdated],
    { durable: 'subscriptions-directory' },
    async (subject, payload) => {
      if (realmSubjects.has(subject)) await applyRealmRecord(deps, payload as RealmRecord);
      else await applyUserRecord(deps, payload as UserRecord);
    },
  );
  await bus.consume([messagesEvents.messageSent], { durable: 'subscriptions-stream-stats' }, async (_subject, payload) => {
    await recordMessageSent(deps, payload as MessageSent);
  });
}

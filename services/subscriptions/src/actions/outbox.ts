/** Writing this service's events into its outbox, inside the caller's transaction. */
import type { EventContract, PayloadOf } from '@zc/shared/bus';
import { eventsInbox } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { SCHEMA } from '../deps.js';
import type { ClientEvent } from '../lib/client-events.js';

/** A domain event for other services' read models. */
export async function emitDomainEvent<C extends EventContract>(tx: Queryable, c: C, payload: PayloadOf<C>): Promise<void> {
  await addToOutbox(tx, SCHEMA, c, payload as never);
}

/** A client event for the queues of `users`; nothing is written for nobody. */
export async function notifyUsers(tx: Queryable, realmId: number, users: readonly number[], event: ClientEvent): Promise<void> {
  if (users.length === 0) return;
  await addToOutbox(tx, SCHEMA, eventsInbox.notify, { realm_id: realmId, users: [...users], event });
}

/** Writing this service's events into its outbox, inside the caller's transaction. */
import type { EventContract, PayloadOf } from '@zc/shared/bus';
import { eventsInbox } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { addManyToOutbox, addToOutbox } from '@zc/shared/outbox';
import { SCHEMA } from '../deps.js';
import type { ClientEvent } from '../lib/client-events.js';

/** A domain event for other services' read models (or a command to another service's inbox). */
export async function emitDomainEvent<C extends EventContract>(tx: Queryable, c: C, payload: PayloadOf<C>): Promise<void> {
  await addToOutbox(tx, SCHEMA, c, payload as never);
}

/** A client event for the queues of `users`; nothing is written for nobody. */
export async function notifyUsers(tx: Queryable, realmId: number, users: readonly number[], event: ClientEvent): Promise<void> {
  if (users.length === 0) return;
  await addToOutbox(tx, SCHEMA, eventsInbox.notify, { realm_id: realmId, users: [...users], event });
}

/**
 * Events gathered in order and written at the end in a few statements (`addManyToOutbox`):
 * for changes that make one or more events per stream, thousands at a time.
 */
export class EventBatch {
  private readonly events: Array<{ c: EventContract; payload: unknown }> = [];

  domain<C extends EventContract>(c: C, payload: PayloadOf<C>): void {
    this.events.push({ c, payload });
  }

  notify(realmId: number, users: readonly number[], event: ClientEvent): void {
    if (users.length === 0) return;
    this.events.push({ c: eventsInbox.notify, payload: { realm_id: realmId, users: [...users], event } });
  }

  /** The payloads gathered so far for `c`, in order (before `write`, which empties the batch). */
  payloadsOf<C extends EventContract>(c: C): Array<PayloadOf<C>> {
    return this.events.filter((e) => e.c === c).map((e) => e.payload as PayloadOf<C>);
  }

  async write(tx: Queryable): Promise<void> {
    await addManyToOutbox(tx, SCHEMA, this.events);
    this.events.length = 0;
  }
}

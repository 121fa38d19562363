/**
 * What every producing service sends to the events service: a client event and the users
 * whose queues get it. The producer decides the recipients (Zulip's send_event contract);
 * the events service only routes, filters by each queue's event_types/narrow, and finalises
 * per queue (apply_markdown, client_gravatar, local_message_id).
 */
import { Type, type Static } from '@sinclair/typebox';
import { event } from '../bus/contract.js';
import { JsonObject } from './common.js';

/** A recipient: a user id, or a user id with that user's flags (message events). */
export const NotifyRecipient = Type.Union([Type.Integer(), Type.Object({ id: Type.Integer(), flags: Type.Array(Type.String()) })]);

export const ClientNotify = Type.Object({
  realm_id: Type.Integer(),
  event: JsonObject,
  users: Type.Array(NotifyRecipient),
  /** The sender's queue gets `local_message_id` (message events only). */
  sender_queue_id: Type.Optional(Type.String()),
  local_id: Type.Optional(Type.String()),
});
export type ClientNotify = Static<typeof ClientNotify>;

export const eventsInbox = {
  /** Durable: written to a producer's outbox, relayed to JetStream, consumed by the events service. */
  notify: event('events.inbox.v1.notify', ClientNotify),
} as const;

/**
 * The events service: event queues (POST /register, DELETE /events; GET /events is served by
 * the gateway from the queues in Redis) and the inbox every producing service writes client
 * events to.
 *
 * What every producing service sends is a client event and the users whose queues get it.
 * The producer decides the recipients (Zulip's send_event contract); the events service only
 * routes, filters by each queue's event_types/narrow, and finalises per queue
 * (apply_markdown, client_gravatar, flags, local_message_id).
 *
 * Conventions for the event body (so the finalisation stays data-driven):
 * - `message` events carry the message as messages.ts describes (`MessageEventMessage`); each
 *   queue gets it through `finaliseMessageForQueue` (apply_markdown, client_gravatar).
 * - `flags` of a recipient entry become the event's top-level `flags` for that user.
 * - `gravatar_fields` names the avatar_url fields a client_gravatar queue receives as null.
 */
import { Type, type Static } from '@sinclair/typebox';
import { broadcast, event, rpc } from '../bus/contract.js';
import { Actor, JsonObject } from './common.js';

/** A recipient: a user id, or a user id with that user's flags (message events). */
export const NotifyRecipient = Type.Union([Type.Integer(), Type.Object({ id: Type.Integer(), flags: Type.Array(Type.String()) })]);
export type NotifyRecipient = Static<typeof NotifyRecipient>;

export const ClientNotify = Type.Object({
  realm_id: Type.Integer(),
  event: JsonObject,
  users: Type.Array(NotifyRecipient),
  /** The sender's queue gets `local_message_id` (message events only). */
  sender_queue_id: Type.Optional(Type.String()),
  local_id: Type.Optional(Type.String()),
  /**
   * The event concerns a public stream: queues of this realm registered with
   * all_public_streams get it too, with the flags of a non-recipient (none).
   */
  public_stream: Type.Optional(Type.Boolean()),
  /**
   * Dotted paths (e.g. `message.avatar_url`, `person.avatar_url`) holding a Gravatar URL the
   * client could compute itself; queues registered with client_gravatar get null there. The
   * producer lists a path only when Zulip would allow it (everyone may see emails).
   */
  gravatar_fields: Type.Optional(Type.Array(Type.String())),
});
export type ClientNotify = Static<typeof ClientNotify>;

export const eventsInbox = {
  /** Durable: written to a producer's outbox, relayed to JetStream, consumed by the events service. */
  notify: event('events.inbox.v1.notify', ClientNotify),
} as const;

/** One narrow term as /register takes it: `[operator, operand]` or `{operator, operand, negated?}`. */
export const EventsNarrowTerm = Type.Union([
  Type.Array(Type.String(), { minItems: 2, maxItems: 2 }),
  Type.Object({ operator: Type.String(), operand: Type.Union([Type.String(), Type.Integer()]), negated: Type.Optional(Type.Boolean()) }),
]);
export type EventsNarrowTerm = Static<typeof EventsNarrowTerm>;

export const RegisterRequest = Type.Object({
  actor: Actor,
  /** null: every type. */
  event_types: Type.Union([Type.Array(Type.String()), Type.Null()]),
  /** null: the same as event_types. */
  fetch_event_types: Type.Union([Type.Array(Type.String()), Type.Null()]),
  narrow: Type.Array(EventsNarrowTerm),
  all_public_streams: Type.Boolean(),
  apply_markdown: Type.Boolean(),
  client_gravatar: Type.Boolean(),
  include_subscribers: Type.Boolean(),
  slim_presence: Type.Boolean(),
  client_capabilities: JsonObject,
  /** 0: the default idle lifetime (10 minutes). */
  queue_lifespan_secs: Type.Integer(),
  client_name: Type.String(),
});
export type RegisterRequest = Static<typeof RegisterRequest>;

export const eventsRpc = {
  /** POST /register: creates a queue and gathers the initial state from the owning services. */
  register: rpc('events.v1.register', { request: RegisterRequest, reply: JsonObject }),
  /** DELETE /events. */
  deleteQueue: rpc('events.v1.delete_queue', {
    request: Type.Object({ actor: Actor, queue_id: Type.String() }),
    reply: Type.Object({}),
  }),
  /**
   * The users service, after committing a change that takes reading rights away and before
   * answering: drops the user's queues that may no longer be fed (`all`: a deactivation;
   * `all_public_streams`: a demotion to guest), ending their parked polls with
   * BAD_EVENT_QUEUE_ID, so the client registers again under its new rights.
   */
  dropUserQueues: rpc('events.v1.drop_user_queues', {
    request: Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer(), scope: Type.Union([Type.Literal('all'), Type.Literal('all_public_streams')]) }),
    reply: Type.Object({ dropped: Type.Integer() }),
  }),
} as const;

/**
 * Core-NATS broadcast (no queue group: every subscriber hears it) about event queues: queues
 * that got events (`wake`, sent by the events service after each append, and when it deletes
 * queues), and the newest poll parked on a queue (`supplant`, sent by the gateway that parked
 * it, so the gateway holding an older poll of that queue ends it). Heard by every gateway's
 * PollHub (@zc/shared/event-queues); not for other services.
 *
 * `appended` comes with a wake after an append: what some of the woken queues just got, so a
 * poll parked on one answers without reading its queue again. `json` holds each distinct
 * event once (its JSON text without id); `queues` gives, per queue, the id of its first new
 * event followed by the indexes in `json` of its new events, in order (their ids follow one
 * another). A queue woken but not listed is read as before.
 */
export const WakeAppended = Type.Object({
  json: Type.Array(Type.String()),
  queues: Type.Record(Type.String(), Type.Array(Type.Integer({ minimum: 0 }), { minItems: 2 })),
});
export type WakeAppended = Static<typeof WakeAppended>;
export const EventsBroadcast = Type.Object({
  wake: Type.Optional(Type.Array(Type.String())),
  appended: Type.Optional(WakeAppended),
  /** With ZC_DELIVERY_TRACE: when the wake was sent (wall-clock ms, fractional). */
  sent_at: Type.Optional(Type.Number()),
  supplant: Type.Optional(Type.Object({ queue_id: Type.String(), generation: Type.Integer() })),
});
export type EventsBroadcast = Static<typeof EventsBroadcast>;
export const eventsBroadcast = broadcast('events.bcast.v1.queues', EventsBroadcast);

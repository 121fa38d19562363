/**
 * The events service: event queues (POST /register, GET and DELETE /events) and the inbox
 * every producing service writes client events to.
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
import { RawJson } from '../bus/raw-json.js';
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

export const GetEventsRequest = Type.Object({
  actor: Actor,
  queue_id: Type.String(),
  last_event_id: Type.Integer(),
  dont_block: Type.Boolean(),
});
export type GetEventsRequest = Static<typeof GetEventsRequest>;

/**
 * GET /events's reply on the wire: `{"queue_id":…,"events":[…]}`, `queue_id` present when the
 * reply ends a parked poll (Zulip's shape). The events service sends it as raw JSON text with
 * `events` last (`eventsReplyText`) and the gateway takes the events' text out of it
 * (`splitEventsReply`): events go from the queue store to the client's response as text,
 * never parsed, nor escaped into a JSON string and unescaped again on the way (that string
 * was most of the gateway's JSON work per delivery).
 */
export const GetEventsWire = Type.Object({ queue_id: Type.Optional(Type.String()), events: Type.Array(Type.Unknown()) });

/** A GET /events reply with its events as JSON text (an array, each event with its `id`). */
export interface GetEventsReply {
  events_json: string;
  queue_id?: string;
}

const EVENTS_ONLY = '{"events":';
const QUEUE_FIRST = '{"queue_id":';
const EVENTS_AFTER = ',"events":';

/** The wire text of a GET /events reply (`GetEventsWire`), events spliced in as they are. */
export function eventsReplyText(r: GetEventsReply): RawJson {
  return new RawJson(r.queue_id === undefined ? `${EVENTS_ONLY}${r.events_json}}` : `${QUEUE_FIRST}${JSON.stringify(r.queue_id)}${EVENTS_AFTER}${r.events_json}}`);
}

/**
 * The reply back from its wire text as `eventsReplyText` writes it, without parsing the
 * events. `,"events":` cannot occur inside the queue id's JSON string (a quote in it is
 * escaped), so its first occurrence ends the id. A text beginning any other way is parsed.
 */
export function splitEventsReply(raw: RawJson): GetEventsReply {
  const text = raw.text;
  if (text.startsWith(EVENTS_ONLY)) return { events_json: text.slice(EVENTS_ONLY.length, -1) };
  const end = text.indexOf(EVENTS_AFTER);
  if (text.startsWith(QUEUE_FIRST) && end > 0) {
    return { queue_id: JSON.parse(text.slice(QUEUE_FIRST.length, end)) as string, events_json: text.slice(end + EVENTS_AFTER.length, -1) };
  }
  const o = JSON.parse(text) as { queue_id?: string; events: unknown[] };
  return { events_json: JSON.stringify(o.events), ...(o.queue_id !== undefined ? { queue_id: o.queue_id } : {}) };
}

/**
 * The longest a parked GET /events waits before its heartbeat (Zulip: 45–55 s). Callers of
 * `eventsRpc.get` wait longer than this; `max_wait_ms` lets them ask for less.
 */
export const LONGPOLL_MAX_PARK_MS = 55_000;

export const eventsRpc = {
  /** POST /register: creates a queue and gathers the initial state from the owning services. */
  register: rpc('events.v1.register', { request: RegisterRequest, reply: JsonObject }),
  /** GET /events: acknowledges `last_event_id`, then returns the queue's next events or parks. */
  get: rpc('events.v1.get', { request: GetEventsRequest, reply: GetEventsWire }),
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
 * Core-NATS broadcast between events replicas (no queue group: every replica hears it):
 * queues that got events (`wake`), and the newest poll parked on a queue (`supplant`, so the
 * replica holding an older poll of that queue ends it). Not for other services. `from`: the
 * sending replica, which has already woken its own polls (replicas that do not send it are
 * heard as before).
 */
export const EventsBroadcast = Type.Object({
  wake: Type.Optional(Type.Array(Type.String())),
  from: Type.Optional(Type.String()),
  supplant: Type.Optional(Type.Object({ queue_id: Type.String(), generation: Type.Integer() })),
});
export type EventsBroadcast = Static<typeof EventsBroadcast>;
export const eventsBroadcast = broadcast('events.bcast.v1.queues', EventsBroadcast);

/**
 * Every events replica says it is alive this often (`eventsAlive`, core NATS). A gateway
 * holding a poll parked on a replica (`Bus.requestHeld`, the replica named itself) stops
 * waiting for it once it has been silent a few beats: a paused or cut-off replica would
 * otherwise keep its polls unanswered until the heartbeat (45–55 s).
 */
export const EVENTS_ALIVE_EVERY_MS = 1_000;
export const EventsAlive = Type.Object({ replica: Type.String() });
export type EventsAlive = Static<typeof EventsAlive>;
export const eventsAlive = broadcast('events.bcast.v1.alive', EventsAlive);

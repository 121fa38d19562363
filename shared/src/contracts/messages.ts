/**
 * The messages service: messages, per-user flags and read state (schema `messages`).
 *
 * Client events it writes to `eventsInbox.notify` (contracts/events.ts):
 *
 * 1. `message`, one notify per sent message:
 *    `{realm_id, users: [{id, flags}], event: {type: 'message', message: MessageEventMessage},
 *      sender_queue_id?, local_id?}`.
 *    `users` holds every recipient with that user's flags (spec 2.9); the sender comes first.
 *    `event.message` is the Message of spec 2.2 as a queue with apply_markdown=true and
 *    client_gravatar=false would see it (`content` rendered HTML, `content_type` text/html,
 *    `avatar_url` always a URL), plus the keys in `MESSAGE_EVENT_PRIVATE_KEYS` that let the
 *    events service finalise it per queue. The events service must call
 *    `finaliseMessageForQueue` (below) for every queue: it applies apply_markdown and
 *    client_gravatar, drops the private keys, and the caller adds `flags` (from `users`)
 *    and `local_message_id` (only for the queue whose id is `sender_queue_id`).
 *
 * 2. `update_message_flags` (api-notes §2.3), to the acting user only:
 *    add:    `{type, op: 'add', operation: 'add', flag, messages: int[], all: false}`
 *    remove: the same with op/operation 'remove', and for flag `read` also
 *            `message_details: {"<id>": {type: 'stream', stream_id, topic, unmuted_stream_msg,
 *            mentioned?: true} | {type: 'private', user_ids: int[] (the others), mentioned?: true}}`.
 *    mark_all_as_read sends one `add`/`read` event per batch with that batch's ids.
 *
 * 3. `update_message` (api-notes §2.3), one notify per PATCH /messages/{id} that changed
 *    something. The event is final as written: the events service passes it through
 *    unchanged except that each recipient's `flags` become the event's top-level `flags`.
 *    `users`: every user with a row for the edited message, `{id, flags}` with that user's
 *    flags on it after the edit; for a stream whose history is public to subscribers, also
 *    every other subscriber (of the old stream, and of the new one on a move) as
 *    `{id, flags: ['read']}` (Zulip's subscriber_info).
 *    `event` (see `UpdateMessageEvent`):
 *    `{type: 'update_message', user_id, rendering_only: false, message_id, message_ids
 *      (sorted, always holding message_id), edit_timestamp,
 *      stream_name?, stream_id? (stream messages: the stream before the edit),
 *      orig_content?, orig_rendered_content?, content?, rendered_content?,
 *      prev_rendered_content_version?, is_me_message? (content edits; `content` is the new
 *      Markdown, `rendered_content` its HTML, for every queue whatever its apply_markdown),
 *      orig_subject?, propagate_mode? (topic or stream moves), subject?, topic_links?
 *      (topic changed), new_stream_id? (stream changed)}`.
 *    A move that takes messages out of a user's reach (to a private stream they are not
 *    subscribed to) also sends those users `{type: 'delete_message', message_type: 'stream',
 *    message_ids, stream_id, topic}` (stream and topic before the move).
 *
 * 4. `reaction` (op add/remove): `{type, op, message_id, user_id, user: {user_id, email,
 *    full_name}, emoji_name, emoji_code, reaction_type}` to everyone who may read the message
 *    now (rows, plus subscribers when the stream's history is public to them), and with
 *    `public_stream` for a public stream's message.
 *
 * 4b. `submessage`: `{type, msg_type, message_id, submessage_id, sender_id, content}` to the
 *    same audience as a reaction (POST /submessage: a poll vote, a todo task).
 *
 * 5. `delete_message`: `{type, message_type: 'private' | 'stream', message_ids, stream_id?,
 *    topic?}` (stream and topic for stream messages) to everyone who could read the deleted
 *    messages. The events service gives it as is to queues with the `bulk_message_deletion`
 *    capability and as one event per message, with `message_id` instead of `message_ids`, to
 *    the others (Zulip's process_deletion_event).
 */
import { Type, type Static } from '@sinclair/typebox';
import { event, rpc } from '../bus/contract.js';
import { Actor, JsonObject, RegisterStateReply, RegisterStateRequest } from './common.js';
import { NotificationBotMessage, StreamAnnouncement, StreamRecord } from './subscriptions.js';
import { MutedUserChange } from './users.js';

/** Keys of a message event's `message` that are for the events service only. */
export const MESSAGE_EVENT_PRIVATE_KEYS = ['raw_content', 'sender_delivery_email', 'sender_avatar_source', 'sender_avatar_version'] as const;

/**
 * The `message` of a message event as the messages service writes it. Besides spec 2.2:
 * - `raw_content`: the Markdown source, the `content` of queues with apply_markdown=false;
 * - `sender_delivery_email`, `sender_avatar_source` ('G' = gravatar, 'U' = uploaded),
 *   `sender_avatar_version`: decide whether a client_gravatar queue gets `avatar_url: null`.
 */
export const MessageEventMessage = Type.Object(
  {
    id: Type.Integer(),
    type: Type.Union([Type.Literal('stream'), Type.Literal('private')]),
    content: Type.String(),
    content_type: Type.String(),
    subject: Type.String(),
    stream_id: Type.Optional(Type.Integer()),
    display_recipient: Type.Union([
      Type.String(),
      Type.Array(Type.Object({ id: Type.Integer(), email: Type.String(), full_name: Type.String(), is_mirror_dummy: Type.Boolean() })),
    ]),
    recipient_id: Type.Integer(),
    sender_id: Type.Integer(),
    sender_email: Type.String(),
    sender_full_name: Type.String(),
    sender_realm_str: Type.String(),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    client: Type.String(),
    timestamp: Type.Integer(),
    is_me_message: Type.Boolean(),
    reactions: Type.Array(JsonObject),
    submessages: Type.Array(JsonObject),
    topic_links: Type.Array(Type.Object({ text: Type.String(), url: Type.String() })),
    /** Present once the message has been edited (spec 2.2). */
    edit_history: Type.Optional(Type.Array(Type.Unknown())),
    last_edit_timestamp: Type.Optional(Type.Integer()),
    raw_content: Type.String(),
    sender_delivery_email: Type.String(),
    sender_avatar_source: Type.String(),
    sender_avatar_version: Type.Integer(),
  },
  { additionalProperties: true },
);
export type MessageEventMessage = Static<typeof MessageEventMessage>;

/**
 * The Message a queue receives, from the message event's `message`: raw Markdown for
 * apply_markdown=false; avatar_url null for client_gravatar=true when the sender uses
 * gravatar and everyone may see the address it hashes (the users service's rule). Pure;
 * returns a new object without the private keys.
 */
export function finaliseMessageForQueue(
  message: Record<string, unknown>,
  queue: { apply_markdown: boolean; client_gravatar: boolean },
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...message };
  if (!queue.apply_markdown) {
    out.content = message.raw_content;
    out.content_type = 'text/x-markdown';
  }
  if (queue.client_gravatar && message.sender_avatar_source === 'G' && message.sender_email === message.sender_delivery_email) {
    out.avatar_url = null;
  }
  for (const k of MESSAGE_EVENT_PRIVATE_KEYS) delete out[k];
  return out;
}

/**
 * One edit of a message (spec 2.3). Every entry has user_id and timestamp; the others
 * appear according to what the edit changed (content, topic, stream).
 */
export const EditHistoryEntry = Type.Object({
  user_id: Type.Union([Type.Integer(), Type.Null()]),
  timestamp: Type.Integer(),
  prev_content: Type.Optional(Type.String()),
  prev_rendered_content: Type.Optional(Type.String()),
  prev_rendered_content_version: Type.Optional(Type.Integer()),
  prev_stream: Type.Optional(Type.Integer()),
  stream: Type.Optional(Type.Integer()),
  prev_topic: Type.Optional(Type.String()),
  topic: Type.Optional(Type.String()),
});
export type EditHistoryEntry = Static<typeof EditHistoryEntry>;

/** The `update_message` client event as the messages service writes it (see the file comment, 3). */
export const UpdateMessageEvent = Type.Object({
  type: Type.Literal('update_message'),
  user_id: Type.Union([Type.Integer(), Type.Null()]),
  rendering_only: Type.Boolean(),
  message_id: Type.Integer(),
  message_ids: Type.Array(Type.Integer()),
  /** Not written by the messages service: each queue gets its user's flags from the notify's `users`. */
  flags: Type.Optional(Type.Array(Type.String())),
  edit_timestamp: Type.Integer(),
  stream_name: Type.Optional(Type.String()),
  stream_id: Type.Optional(Type.Integer()),
  orig_content: Type.Optional(Type.String()),
  orig_rendered_content: Type.Optional(Type.String()),
  content: Type.Optional(Type.String()),
  rendered_content: Type.Optional(Type.String()),
  prev_rendered_content_version: Type.Optional(Type.Integer()),
  is_me_message: Type.Optional(Type.Boolean()),
  orig_subject: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  topic_links: Type.Optional(Type.Array(Type.Object({ text: Type.String(), url: Type.String() }))),
  propagate_mode: Type.Optional(Type.Union([Type.Literal('change_one'), Type.Literal('change_later'), Type.Literal('change_all')])),
  new_stream_id: Type.Optional(Type.Integer()),
});
export type UpdateMessageEvent = Static<typeof UpdateMessageEvent>;

/**
 * A narrow as the client sent it (decoded JSON): a list of `{operator, operand, negated?}`
 * objects or `[operator, operand]` pairs (spec 2.8). The service checks it, so that a
 * malformed narrow gets Zulip's error rather than a contract failure.
 */
export const Narrow = Type.Unknown();

const Done = Type.Object({});

const ReactionRequest = Type.Object({
  actor: Actor,
  message_id: Type.Integer(),
  emoji_name: Type.Optional(Type.String()),
  emoji_code: Type.Optional(Type.String()),
  reaction_type: Type.Optional(Type.String()),
});

export const messagesRpc = {
  /**
   * POST /messages (spec 4.2). `to` is what the client sent (text, or already-decoded JSON);
   * `client` the client name; `idempotency_key` the Idempotency-Key header.
   */
  send: rpc('messages.v1.send', {
    // With an Idempotency-Key a send asked again is stored once (the key is checked where it is written).
    safe: (r) => r.idempotency_key !== undefined,
    request: Type.Object({
      actor: Actor,
      client: Type.String(),
      type: Type.String(),
      to: Type.Unknown(),
      content: Type.String(),
      topic: Type.Optional(Type.String()),
      queue_id: Type.Optional(Type.String()),
      local_id: Type.Optional(Type.String()),
      read_by_sender: Type.Optional(Type.Boolean()),
      idempotency_key: Type.Optional(Type.String()),
    }),
    reply: Type.Object({ id: Type.Integer() }),
  }),
  /** GET /messages (spec 4.9). `anchor` as sent (integer or string), null when absent. */
  list: rpc('messages.v1.list', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({
      actor: Actor,
      anchor: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
      include_anchor: Type.Boolean(),
      num_before: Type.Integer(),
      num_after: Type.Integer(),
      narrow: Narrow,
      apply_markdown: Type.Boolean(),
      client_gravatar: Type.Boolean(),
      use_first_unread_anchor: Type.Boolean(),
    }),
    reply: JsonObject,
  }),
  /** GET /messages/{message_id}: one message the caller may read. */
  getOne: rpc('messages.v1.get_one', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, message_id: Type.Integer(), apply_markdown: Type.Boolean() }),
    reply: Type.Object({ message: JsonObject, raw_content: Type.String() }),
  }),
  /**
   * PATCH /messages/{message_id} (spec 4.14). `propagate_mode` is checked by the service
   * (Zulip's "Invalid propagate_mode"); absent parameters are absent, not null.
   */
  update: rpc('messages.v1.update', {
    request: Type.Object({
      actor: Actor,
      message_id: Type.Integer(),
      content: Type.Optional(Type.String()),
      topic: Type.Optional(Type.String()),
      stream_id: Type.Optional(Type.Integer()),
      propagate_mode: Type.String(),
      send_notification_to_old_thread: Type.Boolean(),
      send_notification_to_new_thread: Type.Boolean(),
    }),
    reply: Done,
  }),
  /**
   * GET /messages/{message_id}/history: Zulip's `message_history`, oldest first, each
   * snapshot with topic, content, rendered_content, user_id, timestamp and, after the first,
   * prev_topic/prev_content/prev_rendered_content and content_html_diff for what changed.
   */
  history: rpc('messages.v1.history', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, message_id: Type.Integer() }),
    reply: Type.Object({ message_history: Type.Array(JsonObject) }),
  }),
  /** GET /messages/matches_narrow (spec 4.7). */
  matchesNarrow: rpc('messages.v1.matches_narrow', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, msg_ids: Type.Array(Type.Integer()), narrow: Narrow }),
    reply: Type.Object({ messages: Type.Record(Type.String(), Type.Object({ match_content: Type.String(), match_subject: Type.String() })) }),
  }),
  /** POST /messages/flags (spec 4.17). */
  updateFlags: rpc('messages.v1.update_flags', {
    request: Type.Object({ actor: Actor, messages: Type.Array(Type.Integer()), op: Type.String(), flag: Type.String() }),
    reply: Type.Object({ messages: Type.Array(Type.Integer()) }),
  }),
  /**
   * POST /messages/flags/narrow (feature level 155): `anchor` as sent (an id, newest, oldest
   * or first_unread), `narrow` as sent; the service checks both as GET /messages does.
   */
  updateFlagsForNarrow: rpc('messages.v1.update_flags_for_narrow', {
    request: Type.Object({
      actor: Actor,
      anchor: Type.Union([Type.String(), Type.Number()]),
      include_anchor: Type.Boolean(),
      num_before: Type.Integer({ minimum: 0 }),
      num_after: Type.Integer({ minimum: 0 }),
      narrow: Narrow,
      op: Type.String(),
      flag: Type.String(),
    }),
    reply: Type.Object({
      processed_count: Type.Integer(),
      updated_count: Type.Integer(),
      first_processed_id: Type.Union([Type.Integer(), Type.Null()]),
      last_processed_id: Type.Union([Type.Integer(), Type.Null()]),
      found_oldest: Type.Boolean(),
      found_newest: Type.Boolean(),
    }),
  }),
  /** POST /mark_all_as_read (spec 4.3); `complete` false means the time limit ran out (partially_completed). */
  markAllAsRead: rpc('messages.v1.mark_all_as_read', {
    request: Type.Object({ actor: Actor }),
    reply: Type.Object({ complete: Type.Boolean() }),
  }),
  /** POST /mark_stream_as_read (spec 4.4). */
  markStreamAsRead: rpc('messages.v1.mark_stream_as_read', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Done,
  }),
  /** POST /mark_topic_as_read (spec 4.5). */
  markTopicAsRead: rpc('messages.v1.mark_topic_as_read', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer(), topic_name: Type.String() }),
    reply: Done,
  }),
  /**
   * POST /messages/{id}/reactions (`emoji_name` required, checked by the service) and
   * DELETE (`emoji_name` or `emoji_code`). `reaction_type` as sent, checked by the service.
   */
  addReaction: rpc('messages.v1.add_reaction', { request: ReactionRequest, reply: Done }),
  removeReaction: rpc('messages.v1.remove_reaction', { request: ReactionRequest, reply: Done }),
  /** POST /submessage: `content` as sent (JSON text, checked by the service). */
  addSubmessage: rpc('messages.v1.add_submessage', {
    request: Type.Object({ actor: Actor, message_id: Type.Integer(), msg_type: Type.String(), content: Type.String() }),
    reply: Done,
  }),
  /**
   * POST /streams/{stream_id}/delete_topic (administrators); `complete` false means the time
   * limit ran out with messages left (partially_completed; the client repeats the request).
   */
  deleteTopic: rpc('messages.v1.delete_topic', {
    request: Type.Object({ actor: Actor, stream_id: Type.Integer(), topic_name: Type.String() }),
    reply: Type.Object({ complete: Type.Boolean() }),
  }),
  /** DELETE /messages/{message_id}. */
  deleteMessage: rpc('messages.v1.delete', { request: Type.Object({ actor: Actor, message_id: Type.Integer() }), reply: Done }),
  /** GET /messages/{message_id}/read_receipts (feature level 137). */
  readReceipts: rpc('messages.v1.read_receipts', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, message_id: Type.Integer() }),
    reply: Type.Object({ user_ids: Type.Array(Type.Integer()) }),
  }),
  /** GET /users/me/{stream_id}/topics: `{name, max_id}` newest first. */
  streamTopics: rpc('messages.v1.stream_topics', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, stream_id: Type.Integer() }),
    reply: Type.Object({ topics: Type.Array(Type.Object({ name: Type.String(), max_id: Type.Integer() })) }),
  }),
  /** POST /messages/render: the HTML `content` would have if sent now by the actor. */
  render: rpc('messages.v1.render', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, content: Type.String() }),
    reply: Type.Object({ rendered: Type.String() }),
  }),
  /**
   * /register's message state: `max_message_id` (fetch `message`), `unread_msgs` (`message`
   * and `update_message_flags`), `starred_messages`, `recent_private_conversations`.
   */
  registerState: rpc('messages.v1.register_state', { request: RegisterStateRequest, reply: RegisterStateReply, safe: true }),
  /** The newest message id the user received (-1 if none), for GET /users/me's `max_message_id`. */
  maxMessageId: rpc('messages.v1.max_message_id', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ realm_id: Type.Integer(), user_id: Type.Integer() }),
    reply: Type.Object({ max_message_id: Type.Integer() }),
  }),
  /**
   * POST /typing. `type` is "private"/"direct" or "stream"/"channel" (the gateway checked it);
   * `to` what the client sent, decoded: recipients' ids (or emails) for a direct message, or
   * (before feature level 215) the stream's id in a one-element list.
   */
  typing: rpc('messages.v1.typing', {
    request: Type.Object({
      actor: Actor,
      type: Type.Union([Type.Literal('private'), Type.Literal('stream')]),
      op: Type.Union([Type.Literal('start'), Type.Literal('stop')]),
      to: Type.Optional(Type.Union([Type.Array(Type.Integer()), Type.Array(Type.String())])),
      stream_id: Type.Optional(Type.Integer()),
      topic: Type.Optional(Type.String()),
    }),
    reply: Type.Object({}),
  }),
  /**
   * Whether the actor may read at least one of these messages (Zulip's has_message_access):
   * the uploads service's rule for who may download a file linked from messages.
   */
  canReadAny: rpc('messages.v1.can_read_any', {
    // A read: may be asked again of another replica (Bus.request).
    safe: true,
    request: Type.Object({ actor: Actor, message_ids: Type.Array(Type.Integer(), { maxItems: 10_000 }) }),
    reply: Type.Object({ readable: Type.Boolean() }),
  }),
  /**
   * The subscriptions service's stream and subscribers as just committed, stored in this
   * service's read model before the change is answered: a stream made private or archived
   * is closed on every read path at once, a renamed one answers to its new name (read your
   * writes). The domain events that follow carry the same revision and change nothing.
   */
  syncStream: rpc('messages.v1.sync_stream', {
    request: Type.Object({ stream: StreamRecord, subscriber_ids: Type.Array(Type.Integer()) }),
    reply: Type.Object({}),
  }),
  /**
   * The users service's mute change, stored (and the muted sender's messages marked read)
   * before the mute is answered; the domain event carries the same revision and changes nothing.
   */
  syncMutedUser: rpc('messages.v1.sync_muted_user', { request: MutedUserChange, reply: Type.Object({}) }),
  /**
   * The notification bot's posts of a subscriptions change (its messages, then its stream
   * announcements, in Zulip's order), made before the change is answered, as Zulip makes them in the
   * change's own transaction. The same posts are in the subscriptions outbox; each post's
   * idempotency key makes the two one.
   */
  postNotices: rpc('messages.v1.post_notices', {
    request: Type.Object({
      messages: Type.Array(NotificationBotMessage, { maxItems: 100 }),
      announcements: Type.Array(StreamAnnouncement, { maxItems: 100 }),
    }),
    reply: Type.Object({}),
  }),
} as const;

export const MessageSent = Type.Object({
  realm_id: Type.Integer(),
  message_id: Type.Integer(),
  /** null for direct messages. */
  stream_id: Type.Union([Type.Integer(), Type.Null()]),
  sender_id: Type.Integer(),
  /** UNIX seconds. */
  timestamp: Type.Integer(),
});
export type MessageSent = Static<typeof MessageSent>;

/**
 * The uploaded files a message links (`/user_uploads/<path_id>` in its content), after a send
 * that links any, after an edit that changes them, and (empty) when the message is deleted.
 */
/** MessageAttachmentsChanged.version of a deleted message: final, no later change undoes it. */
export const MESSAGE_DELETED_VERSION = 2 ** 31 - 1;

export const MessageAttachmentsChanged = Type.Object({
  realm_id: Type.Integer(),
  message_id: Type.Integer(),
  sender_id: Type.Integer(),
  /** UNIX seconds the message was sent (not edited). */
  date_sent: Type.Integer(),
  path_ids: Type.Array(Type.String()),
  /**
   * Orders the changes of one message, which reach the uploads service twice (pushed before
   * the send, edit or deletion is answered, and as this event): 0 at send, the length of the
   * edit history after an edit, MESSAGE_DELETED_VERSION at deletion. A change older than one
   * already applied is ignored. Absent in events written before it existed: applied as they come.
   */
  version: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type MessageAttachmentsChanged = Static<typeof MessageAttachmentsChanged>;

/**
 * Messages moved from one stream to another (PATCH /messages/{id}): the subscriptions
 * service keeps each stream's first_message_id from it. `from_first_message_id` is the old
 * stream's oldest message after the move (null: none left), read in the move's transaction.
 */
export const MessagesMoved = Type.Object({
  realm_id: Type.Integer(),
  from_stream_id: Type.Integer(),
  to_stream_id: Type.Integer(),
  /** The oldest of the moved messages. */
  moved_first_message_id: Type.Integer(),
  from_first_message_id: Type.Union([Type.Integer(), Type.Null()]),
});
export type MessagesMoved = Static<typeof MessagesMoved>;

/**
 * Stream messages were deleted (DELETE /messages/{id}, delete_topic), among them the stream's
 * oldest: the subscriptions service moves its first_message_id to `first_message_id`, the
 * oldest message left, read in the deletion's transaction (null: none left). Deletions that
 * leave the oldest message in place send none.
 */
export const StreamMessagesDeleted = Type.Object({
  realm_id: Type.Integer(),
  stream_id: Type.Integer(),
  message_ids: Type.Array(Type.Integer()),
  first_message_id: Type.Union([Type.Integer(), Type.Null()]),
});
export type StreamMessagesDeleted = Static<typeof StreamMessagesDeleted>;

/** Several message.sent events as one (the outbox relay publishes a run of them so: OutboxCoalescing). */
export const MessagesSent = Type.Object({ sent: Type.Array(MessageSent) });
export type MessagesSent = Static<typeof MessagesSent>;

export const messagesEvents = {
  /** A message was stored (subscriptions counts first_message_id and weekly traffic from it). */
  messageSent: event('messages.evt.v1.message.sent', MessageSent),
  /** message.sent events of several messages, in order, as the relay publishes them (`messagesSentCoalescing`). */
  messagesSent: event('messages.evt.v1.messages.sent', MessagesSent),
  /** The uploads service links attachments to messages from it. */
  messageAttachmentsChanged: event('messages.evt.v1.message.attachments_changed', MessageAttachmentsChanged),
  messagesMoved: event('messages.evt.v1.messages.moved', MessagesMoved),
  streamMessagesDeleted: event('messages.evt.v1.stream_messages.deleted', StreamMessagesDeleted),
} as const;

/** A direct message one of the realm's system bots sends on another service's behalf. */
export const SystemBotMessage = Type.Object({
  realm_id: Type.Integer(),
  /** Idempotency key: a redelivered request sends nothing twice. */
  key: Type.String(),
  /** The system bot that sends it (e.g. Welcome Bot). */
  sender_id: Type.Integer(),
  recipient_id: Type.Integer(),
  content: Type.String(),
});
export type SystemBotMessage = Static<typeof SystemBotMessage>;

/** A new human user's first streams, whose recent history they get (subscriptions, at sign-up). */
export const NewUserHistory = Type.Object({
  realm_id: Type.Integer(),
  user_id: Type.Integer(),
  stream_ids: Type.Array(Type.Integer()),
});
export type NewUserHistory = Static<typeof NewUserHistory>;

export const messagesInbox = {
  /** Durable: written to a producer's outbox (users: a new user's welcome), sent by the messages service. */
  systemBotMessage: event('messages.inbox.v1.system_bot_message', SystemBotMessage),
  /** Durable: written by subscriptions when a new user joins the default streams. */
  newUserHistory: event('messages.inbox.v1.new_user_history', NewUserHistory),
} as const;

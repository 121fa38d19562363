/**
 * A stored message as clients see it (spec 2.2): the message event's form (full HTML and
 * avatar, plus the keys the events service finalises per queue) and GET /messages' form
 * (finalised for the request's apply_markdown and client_gravatar).
 */
import { createHash } from 'node:crypto';
import { finaliseMessageForQueue, type EditHistoryEntry, type MessageEventMessage } from '@zc/shared/contracts';
import type { TopicLink } from './render.js';

export interface SenderView {
  id: number;
  email: string;
  delivery_email: string;
  full_name: string;
  avatar_source: string;
  avatar_version: number;
}

export interface DisplayUser {
  id: number;
  email: string;
  full_name: string;
  is_mirror_dummy: boolean;
}

export interface MessageRowView {
  id: number;
  sender_id: number;
  recipient_id: number;
  stream_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  date_sent: Date;
  sending_client: string;
  is_me_message: boolean;
  /** Newest first; null or absent until the message is edited. */
  edit_history?: EditHistoryEntry[] | null;
  last_edit_time?: Date | null;
}

/** Every message event carries its sender's avatar URL: the few senders' hashes are kept, not recomputed per message. */
const gravatarHashes = new Map<string, string>();
const GRAVATAR_HASHES_KEPT = 10_000;

function gravatarHash(email: string): string {
  let hash = gravatarHashes.get(email);
  if (hash === undefined) {
    hash = createHash('md5').update(email.toLowerCase()).digest('hex');
    if (gravatarHashes.size >= GRAVATAR_HASHES_KEPT) gravatarHashes.clear();
    gravatarHashes.set(email, hash);
  }
  return hash;
}

/** The users' avatar rule: gravatar of the lower-cased real address, or the uploaded file. */
export function avatarUrlOf(u: Pick<SenderView, 'delivery_email' | 'avatar_source' | 'avatar_version'>): string {
  if (u.avatar_source === 'G') {
    const hash = gravatarHash(u.delivery_email);
    return `https://secure.gravatar.com/avatar/${hash}?d=identicon&version=${u.avatar_version}`;
  }
  return `/user_avatars/${u.delivery_email}?version=${u.avatar_version}`;
}

/**
 * Zulip's display_recipient for a direct message: the users of a group by id; for a 1:1
 * message the receiver and the sender ordered by email; for a message to oneself, oneself.
 */
export function privateDisplayRecipient(recipientUsers: readonly DisplayUser[], sender: DisplayUser, recipientType: number): DisplayUser[] {
  if (recipientType !== 1) return [...recipientUsers].sort((a, b) => a.id - b.id);
  const [receiver] = recipientUsers;
  if (!receiver || receiver.id === sender.id) return [sender];
  return receiver.email < sender.email ? [receiver, sender] : [sender, receiver];
}

export function toDisplayUser(u: Pick<SenderView, 'id' | 'email' | 'full_name'>): DisplayUser {
  return { id: u.id, email: u.email, full_name: u.full_name, is_mirror_dummy: false };
}

/** A reaction as stored, and the reacting user's current name and email. */
export interface ReactionView {
  user_id: number;
  reaction_type: string;
  emoji_code: string;
  emoji_name: string;
}

/**
 * A Message's reaction (spec 2.4). At our feature level it still carries the deprecated
 * `user` object (Zulip removed it at level 328) beside `user_id`.
 */
export function toApiReaction(r: ReactionView, user: Pick<SenderView, 'id' | 'email' | 'full_name'>): Record<string, unknown> {
  return {
    emoji_name: r.emoji_name,
    emoji_code: r.emoji_code,
    reaction_type: r.reaction_type,
    user_id: r.user_id,
    user: { id: user.id, email: user.email, full_name: user.full_name },
  };
}

/** The message event's `message` (contracts/messages.ts documents every key). */
export function toEventMessage(
  m: MessageRowView,
  sender: SenderView,
  displayRecipient: string | DisplayUser[],
  realmStr: string,
  topicLinks: TopicLink[] = [],
): MessageEventMessage {
  const out: MessageEventMessage = {
    id: m.id,
    type: m.stream_id === null ? 'private' : 'stream',
    content: m.rendered_content,
    content_type: 'text/html',
    subject: m.stream_id === null ? '' : m.topic,
    display_recipient: displayRecipient,
    recipient_id: m.recipient_id,
    sender_id: m.sender_id,
    sender_email: sender.email,
    sender_full_name: sender.full_name,
    sender_realm_str: realmStr,
    avatar_url: avatarUrlOf(sender),
    client: m.sending_client,
    timestamp: Math.floor(m.date_sent.getTime() / 1000),
    is_me_message: m.is_me_message,
    reactions: [],
    submessages: [],
    topic_links: topicLinks,
    raw_content: m.content,
    sender_delivery_email: sender.delivery_email,
    sender_avatar_source: sender.avatar_source,
    sender_avatar_version: sender.avatar_version,
  };
  if (m.stream_id !== null) out.stream_id = m.stream_id;
  // Spec 2.2: both are absent until the first edit.
  if (m.edit_history) out.edit_history = m.edit_history;
  if (m.last_edit_time) out.last_edit_timestamp = Math.floor(m.last_edit_time.getTime() / 1000);
  return out;
}

/** A Message of GET /messages: the event form finalised for this request, plus the reader's flags. */
export function toApiMessage(
  event: MessageEventMessage,
  flags: string[],
  opts: { apply_markdown: boolean; client_gravatar: boolean },
): Record<string, unknown> {
  return { ...finaliseMessageForQueue(event, opts), flags };
}

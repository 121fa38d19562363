/**
 * The rules of PATCH /messages/{id} (spec 4.14) that need no I/O, with Zulip's messages
 * (zerver/actions/message_edit.py at the spec's era, feature level ~155, and the channel
 * wording this server uses everywhere): what the request asks to change, who may edit
 * content or topics and move between streams, and the edit history entry (spec 2.3).
 */
import { isModerator, type EditHistoryEntry } from '@zc/shared/contracts';
import { hasPolicyPermission, type PolicySubject, type RealmSettings } from '@zc/shared/policy';
import { badRequest } from '@zc/shared/errors';
import { normaliseTopic } from './message-input.js';

export const PROPAGATE_MODES = ['change_one', 'change_later', 'change_all'] as const;
export type PropagateMode = (typeof PROPAGATE_MODES)[number];

export const noEditPermission = () => badRequest("You don't have permission to edit this message");

export function parsePropagateMode(raw: string): PropagateMode {
  if (!(PROPAGATE_MODES as readonly string[]).includes(raw)) throw badRequest('Invalid propagate_mode');
  return raw as PropagateMode;
}

/** Realm settings the edit rules read (read them with @zc/shared/policy's realmSettings). */
export type EditSettings = Pick<
  RealmSettings,
  | 'allow_message_editing'
  | 'message_content_edit_limit_seconds'
  | 'edit_topic_policy'
  | 'move_messages_between_streams_policy'
  | 'waiting_period_threshold'
  | 'allow_edit_history'
>;

export interface Editor extends PolicySubject {
  user_id: number;
}

export interface EditTarget {
  sender_id: number;
  stream_id: number | null;
  topic: string;
  date_sent: Date;
}

export interface EditRequest {
  content?: string;
  topic?: string;
  stream_id?: number;
  propagate_mode: PropagateMode;
}

/** What an edit changes, after dropping no-op parts (a topic or stream equal to the current one). */
export interface EditChange {
  content?: string;
  topic?: string;
  stream_id?: number;
  propagate_mode: PropagateMode;
}

/** Zulip's validate_message_edit_payload, in its order: the first broken rule is the error. */
export function checkEditPayload(m: EditTarget, r: EditRequest): EditChange {
  let topic = r.topic?.trim();
  if (topic !== undefined && topic === m.topic) topic = undefined;
  const streamId = r.stream_id !== undefined && r.stream_id === m.stream_id ? undefined : r.stream_id;
  if (topic === undefined && r.content === undefined && streamId === undefined) throw badRequest('Nothing to change');
  if (m.stream_id === null) {
    if (streamId !== undefined) throw badRequest('Direct messages cannot be moved to channels.');
    if (topic !== undefined) throw badRequest('Direct messages cannot have topics.');
  }
  if (r.propagate_mode !== 'change_one' && topic === undefined && streamId === undefined) {
    throw badRequest('Invalid propagate_mode without topic edit');
  }
  if (topic !== undefined) topic = normaliseTopic(topic);
  if (streamId !== undefined && r.content !== undefined) throw badRequest('Cannot change message content while changing channel');
  return {
    ...(r.content !== undefined ? { content: r.content } : {}),
    ...(topic !== undefined ? { topic } : {}),
    ...(streamId !== undefined ? { stream_id: streamId } : {}),
    propagate_mode: r.propagate_mode,
  };
}

// Zulip allows 20 s past the limit: its web client lets an edit start up to 15 s before it.
const EDIT_LIMIT_BUFFER_SECONDS = 20;
// Zulip's DEFAULT_COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS (3 days) for other people's topics.
const COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS = 3 * 24 * 3600;

const NO_TOPIC = '(no topic)';

/**
 * Zulip's check_update_message permission rules (before feature level 159): content only by
 * its sender (administrators included) within the realm's limit; a topic by its sender, by
 * anyone for a "(no topic)" message, or by whoever edit_topic_policy allows (others' topics
 * only for 3 days unless administrator or moderator); moving between streams by whoever
 * move_messages_between_streams_policy allows.
 */
export function checkEditPermission(editor: Editor, m: EditTarget, change: EditChange, s: EditSettings, now: Date): void {
  if (!s.allow_message_editing) throw badRequest('Your organization has turned off message editing');
  const isSender = m.sender_id === editor.user_id;
  const ageSeconds = (now.getTime() - m.date_sent.getTime()) / 1000;
  if (change.content !== undefined) {
    if (!isSender) throw noEditPermission();
    const limit = s.message_content_edit_limit_seconds;
    if (limit !== null && limit > 0 && ageSeconds > limit + EDIT_LIMIT_BUFFER_SECONDS) {
      throw badRequest('The time limit for editing this message has passed');
    }
  }
  if (change.topic !== undefined && !isSender) {
    const isNoTopic = m.topic === NO_TOPIC;
    if (!isNoTopic && !hasPolicyPermission(editor, s.edit_topic_policy, s.waiting_period_threshold, now)) throw noEditPermission();
    if (!isNoTopic && !isModerator(editor) && ageSeconds > COMMUNITY_TOPIC_EDITING_LIMIT_SECONDS + EDIT_LIMIT_BUFFER_SECONDS) {
      throw badRequest("The time limit for editing this message's topic has passed");
    }
  }
  if (change.stream_id !== undefined && !hasPolicyPermission(editor, s.move_messages_between_streams_policy, s.waiting_period_threshold, now)) {
    throw badRequest("You don't have permission to move this message");
  }
}

/** Zulip stores an emptied message as "(deleted)" rather than refusing the edit. */
export function contentAfterEdit(raw: string): string {
  return raw.trim() === '' ? '(deleted)' : raw;
}

/** The edit history entry of one message (spec 2.3): only what changed, besides user_id and timestamp. */
export function editHistoryEntry(e: {
  userId: number;
  timestamp: number;
  content?: { prev_content: string; prev_rendered_content: string; prev_rendered_content_version: number };
  topic?: { prev: string; next: string };
  stream?: { prev: number; next: number };
}): EditHistoryEntry {
  return {
    user_id: e.userId,
    timestamp: e.timestamp,
    ...(e.content ?? {}),
    ...(e.stream ? { prev_stream: e.stream.prev, stream: e.stream.next } : {}),
    ...(e.topic ? { prev_topic: e.topic.prev, topic: e.topic.next } : {}),
  };
}

/** Zulip's RESOLVED_TOPIC_PREFIX: resolving a topic renames it to this plus the topic. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** Python's str.lstrip(chars): every leading character that is one of `chars`. */
function stripLeading(s: string, chars: string): string {
  let i = 0;
  while (i < s.length && chars.includes(s[i] as string)) i++;
  return s.slice(i);
}

/** Whether a rename only resolves or unresolves the topic (Zulip's topic_resolved / topic_unresolved). */
export function topicResolution(oldTopic: string, newTopic: string): 'resolved' | 'unresolved' | null {
  const isResolved = (t: string) => t.startsWith(RESOLVED_TOPIC_PREFIX);
  if (isResolved(newTopic) && !isResolved(oldTopic) && stripLeading(newTopic, RESOLVED_TOPIC_PREFIX) === oldTopic) return 'resolved';
  if (isResolved(oldTopic) && !isResolved(newTopic) && stripLeading(oldTopic, RESOLVED_TOPIC_PREFIX) === newTopic) return 'unresolved';
  return null;
}

/** The notification bot's posts about a move (Zulip's send_message_moved_breadcrumbs wording). */
export function moveNotices(n: {
  user: string;
  oldLocation: string;
  newLocation: string;
  movedCount: number;
  movedAll: boolean;
}): { old: string; new: string } {
  if (n.movedAll) {
    return { old: `This topic was moved to ${n.newLocation} by ${n.user}.`, new: `This topic was moved here from ${n.oldLocation} by ${n.user}.` };
  }
  if (n.movedCount === 1) {
    return { old: `A message was moved from this topic to ${n.newLocation} by ${n.user}.`, new: `A message was moved here from ${n.oldLocation} by ${n.user}.` };
  }
  return {
    old: `${n.movedCount} messages were moved from this topic to ${n.newLocation} by ${n.user}.`,
    new: `${n.movedCount} messages were moved here from ${n.oldLocation} by ${n.user}.`,
  };
}

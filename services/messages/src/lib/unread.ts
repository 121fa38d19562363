/**
 * /register's `unread_msgs` (api-notes §2.1) from a user's unread rows, as Zulip's
 * aggregate_unread_data builds it: messages in muted streams and muted topics stay listed
 * under `streams` but are left out of `count`, and their wildcard mentions out of `mentions`.
 */
import { FLAG_BITS } from './flags.js';

/** At most this many unread messages are reported (the newest); `old_unreads_missing` says so. */
export const MAX_UNREAD_MESSAGES = 50000;

export interface UnreadRow {
  message_id: number;
  sender_id: number;
  stream_id: number | null;
  topic: string;
  /** 1 personal, 3 huddle (stream rows: 2). */
  recipient_type: number;
  /** Users of a personal or huddle recipient. */
  recipient_user_ids: number[];
  flags: number;
  /** The stream or the topic is muted for this user. */
  muted: boolean;
}

export interface UnreadMsgs {
  count: number;
  pms: Array<{ other_user_id: number; sender_id: number; unread_message_ids: number[] }>;
  streams: Array<{ stream_id: number; topic: string; unread_message_ids: number[] }>;
  huddles: Array<{ user_ids_string: string; unread_message_ids: number[] }>;
  mentions: number[];
  old_unreads_missing: boolean;
}

/** `rows` sorted by message id ascending; `truncated` when more unread rows exist than were read. */
export function aggregateUnread(userId: number, rows: readonly UnreadRow[], truncated: boolean): UnreadMsgs {
  const pms = new Map<number, number[]>();
  const streams = new Map<string, { stream_id: number; topic: string; unread_message_ids: number[] }>();
  const huddles = new Map<string, number[]>();
  const mentions: number[] = [];
  let count = 0;
  for (const r of rows) {
    const directMention = (r.flags & FLAG_BITS.mentioned) !== 0;
    const wildcardMention = (r.flags & FLAG_BITS.wildcard_mentioned) !== 0;
    if (r.stream_id !== null) {
      // Topics group case-insensitively, under the first spelling seen (Zulip does the same).
      const key = `${r.stream_id}\u0000${r.topic.toLowerCase()}`;
      let entry = streams.get(key);
      if (!entry) {
        entry = { stream_id: r.stream_id, topic: r.topic, unread_message_ids: [] };
        streams.set(key, entry);
      }
      entry.unread_message_ids.push(r.message_id);
      if (!r.muted) count++;
      if (directMention || (wildcardMention && !r.muted)) mentions.push(r.message_id);
      continue;
    }
    count++;
    if (directMention || wildcardMention) mentions.push(r.message_id);
    if (r.recipient_type === 3) {
      const key = [...r.recipient_user_ids].sort((a, b) => a - b).join(',');
      const list = huddles.get(key) ?? [];
      list.push(r.message_id);
      huddles.set(key, list);
    } else {
      // The other party of a 1:1 conversation: the sender if it is not me, else the receiver.
      const other = r.sender_id !== userId ? r.sender_id : (r.recipient_user_ids[0] ?? userId);
      const list = pms.get(other) ?? [];
      list.push(r.message_id);
      pms.set(other, list);
    }
  }
  return {
    count,
    pms: [...pms].map(([other, ids]) => ({ other_user_id: other, sender_id: other, unread_message_ids: ids })),
    streams: [...streams.values()],
    huddles: [...huddles].map(([key, ids]) => ({ user_ids_string: key, unread_message_ids: ids })),
    mentions,
    old_unreads_missing: truncated,
  };
}

/**
 * The messages service's part of POST /register (api-notes §2.1), read in one snapshot:
 * max_message_id, unread_msgs, starred_messages, recent_private_conversations.
 */
import { isGuest, type Actor } from '@zc/shared/contracts';
import { readWithSnapshot, type Queryable } from '@zc/shared/db';
import type { MessagesDeps } from '../deps.js';
import { FLAG_BITS } from '../lib/flags.js';
import { aggregateUnread, MAX_UNREAD_MESSAGES, type UnreadMsgs, type UnreadRow } from '../lib/unread.js';
import { messageStore } from '../store/message-store.js';
import { readModelStore } from '../store/read-model-store.js';

const RECENT_CONVERSATIONS_LIMIT = 1000;

/** Unread rows in direct messages and in streams the user is subscribed to (Zulip's invariant). */
async function unreadMsgs(q: Queryable, userId: number): Promise<UnreadMsgs> {
  const { rows } = await q.query<UnreadRow>(
    `SELECT um.message_id, m.sender_id, m.stream_id, m.topic, r.type AS recipient_type, r.user_ids::int[] AS recipient_user_ids, um.flags,
       COALESCE((s.is_muted AND COALESCE(ut.visibility_policy, 0) NOT IN (2, 3)) OR ut.visibility_policy = 1, false) AS muted
     FROM messages.user_message um
     JOIN messages.message m ON m.id = um.message_id
     JOIN messages.recipient r ON r.id = m.recipient_id
     LEFT JOIN messages.subscriber s ON s.stream_id = m.stream_id AND s.user_id = $1
     LEFT JOIN messages.user_topic ut ON ut.user_id = $1 AND ut.stream_id = m.stream_id AND ut.topic_key = lower(m.topic)
     WHERE um.user_id = $1 AND (um.flags & 1) = 0 AND (m.stream_id IS NULL OR s.user_id IS NOT NULL)
     ORDER BY um.message_id DESC LIMIT $2`,
    [userId, MAX_UNREAD_MESSAGES + 1],
  );
  const truncated = rows.length > MAX_UNREAD_MESSAGES;
  return aggregateUnread(userId, rows.slice(0, MAX_UNREAD_MESSAGES).reverse(), truncated);
}

/**
 * Starred messages the user may read now. A starred row outlives access (a public stream made
 * private, a private stream left or archived): such a message is gone from every narrow, so
 * listing it here would give clients a starred count no narrow can show (the same re-check as
 * narrow-plan.ts's user_messages mode).
 */
async function starredMessages(q: Queryable, actor: Actor): Promise<number[]> {
  const excluded = await readModelStore.inaccessibleStreamRecipients(q, actor.realm_id, actor.user_id, isGuest(actor));
  const { rows } = await q.query<{ message_id: number }>(
    `SELECT um.message_id FROM messages.user_message um JOIN messages.message m ON m.id = um.message_id
     WHERE um.user_id = $1 AND (um.flags & ${FLAG_BITS.starred}) <> 0 AND (m.stream_id IS NULL OR NOT (m.recipient_id = ANY($2::bigint[])))
     ORDER BY um.message_id`,
    [actor.user_id, excluded],
  );
  return rows.map((r) => r.message_id);
}

/**
 * Zulip's get_recent_private_conversations: the latest direct-message conversations, each
 * as the other users (sorted; [] for oneself) and the newest message id. Messages I sent
 * are keyed by their recipient; messages sent to me alone by their sender.
 */
async function recentPrivateConversations(q: Queryable, userId: number): Promise<Array<{ max_message_id: number; user_ids: number[] }>> {
  const mine = (await readModelStore.findPersonalRecipients(q, [userId])).get(userId) ?? -1;
  const { rows } = await q.query<{ recipient_id: number | null; sender_id: number | null; max_id: number; user_ids: number[] | null }>(
    `SELECT c.recipient_id, c.sender_id, max(c.message_id) AS max_id, r.user_ids::int[] AS user_ids FROM (
       (SELECT um.message_id, m.recipient_id, NULL::bigint AS sender_id
        FROM messages.user_message um JOIN messages.message m ON m.id = um.message_id
        WHERE um.user_id = $1 AND (um.flags & ${FLAG_BITS.is_private}) <> 0 AND m.recipient_id <> $2
        ORDER BY um.message_id DESC LIMIT $3)
       UNION ALL
       (SELECT um.message_id, NULL::bigint, m.sender_id
        FROM messages.user_message um JOIN messages.message m ON m.id = um.message_id
        WHERE um.user_id = $1 AND (um.flags & ${FLAG_BITS.is_private}) <> 0 AND m.recipient_id = $2
        ORDER BY um.message_id DESC LIMIT $3)
     ) c LEFT JOIN messages.recipient r ON r.id = c.recipient_id
     GROUP BY c.recipient_id, c.sender_id, r.user_ids`,
    [userId, mine, RECENT_CONVERSATIONS_LIMIT],
  );
  const byKey = new Map<string, { max_message_id: number; user_ids: number[] }>();
  for (const r of rows) {
    const others = (r.recipient_id !== null ? (r.user_ids ?? []) : [r.sender_id as number]).filter((id) => id !== userId).sort((a, b) => a - b);
    const key = others.join(',');
    const prev = byKey.get(key);
    if (!prev || prev.max_message_id < r.max_id) byKey.set(key, { max_message_id: r.max_id, user_ids: others });
  }
  return [...byKey.values()].sort((a, b) => b.max_message_id - a.max_message_id);
}

export async function getRegisterState(deps: MessagesDeps, actor: Actor, fetch: readonly string[]): Promise<{ snapshot: string; state: Record<string, unknown> }> {
  const want = (t: string) => fetch.includes(t);
  const { snapshot, result } = await readWithSnapshot(deps.pool, async (q) => {
    const state: Record<string, unknown> = {};
    if (want('message')) state.max_message_id = await messageStore.maxMessageIdFor(q, actor.user_id);
    if (want('message') && want('update_message_flags')) state.unread_msgs = await unreadMsgs(q, actor.user_id);
    if (want('starred_messages')) state.starred_messages = await starredMessages(q, actor);
    if (want('recent_private_conversations')) state.recent_private_conversations = await recentPrivateConversations(q, actor.user_id);
    return state;
  });
  return { snapshot, state: result };
}

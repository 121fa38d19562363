/** Message rows to the Message objects of spec 2.2, with the read models' names and avatars. */
import type { MessageEventMessage } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { privateDisplayRecipient, toApiReaction, toDisplayUser, toEventMessage, type DisplayUser } from '../lib/message-view.js';
import type { TopicLink } from '../lib/render.js';
import type { MessageRow } from '../store/message-store.js';
import { reactionStore, type ReactionRow } from '../store/reaction-store.js';
import { submessageStore } from '../store/submessage-store.js';
import { widgetSubmessage, type Submessage } from '../lib/widget.js';
import { directoryRows, readModelStore, type UserRow } from '../store/read-model-store.js';

const unknownUser = (id: number): UserRow => ({
  id,
  realm_id: 0,
  email: `user${id}@unknown.invalid`,
  delivery_email: `user${id}@unknown.invalid`,
  full_name: 'Unknown user',
  role: 400,
  is_active: false,
  is_bot: false,
  is_system_bot: false,
  bot_owner_id: null,
  avatar_source: 'G',
  avatar_version: 1,
  date_joined: new Date(0),
});

/** The event form of each row (the same dict a message event carries), in the rows' order. */
export async function hydrateMessages(
  q: Queryable,
  realmId: number,
  realmStr: string,
  rows: readonly MessageRow[],
  topicLinks: (topic: string) => TopicLink[] = () => [],
): Promise<MessageEventMessage[]> {
  if (rows.length === 0) return [];
  const privateRecipientIds = [...new Set(rows.filter((r) => r.stream_id === null).map((r) => r.recipient_id))];
  const streamIds = [...new Set(rows.flatMap((r) => (r.stream_id === null ? [] : [r.stream_id])))];
  // Independent lookups go out together (on separate pool connections): a page of history
  // waits for one round trip here instead of three.
  const [recipients, senders, streamRows, reactions, submessages] = await Promise.all([
    readModelStore.recipientsByIds(q, privateRecipientIds),
    directoryRows.usersByIds(q, realmId, [...new Set(rows.map((r) => r.sender_id))]),
    readModelStore.streamsByIds(q, streamIds),
    reactionStore.ofMessages(q, rows.map((r) => r.id)),
    submessageStore.ofMessages(q, rows.map((r) => r.id)),
  ]);
  const recipientById = new Map(recipients.map((r) => [r.id, r]));
  const users = new Map(senders.map((u) => [u.id, u]));
  const others = [...new Set([...recipients.flatMap((r) => r.user_ids), ...reactions.map((r) => r.user_id)])].filter((id) => !users.has(id));
  const reactionsOf = new Map<number, ReactionRow[]>();
  for (const r of reactions) {
    let list = reactionsOf.get(r.message_id);
    if (!list) reactionsOf.set(r.message_id, (list = []));
    list.push(r);
  }
  const submessagesOf = new Map<number, Submessage[]>();
  for (const s of submessages) {
    let list = submessagesOf.get(s.message_id);
    if (!list) submessagesOf.set(s.message_id, (list = []));
    list.push(s);
  }
  for (const u of await directoryRows.usersByIds(q, realmId, others)) users.set(u.id, u);
  const streams = new Map(streamRows.map((s) => [s.id, s]));
  const user = (id: number) => users.get(id) ?? unknownUser(id);
  return rows.map((m) => {
    const sender = user(m.sender_id);
    let display: string | DisplayUser[];
    if (m.stream_id !== null) {
      display = streams.get(m.stream_id)?.name ?? '';
    } else {
      const rec = recipientById.get(m.recipient_id);
      display = privateDisplayRecipient((rec?.user_ids ?? []).map((id) => toDisplayUser(user(id))), toDisplayUser(sender), rec?.type ?? 1);
    }
    const out = toEventMessage(m, sender, display, realmStr, m.stream_id === null ? [] : topicLinks(m.topic));
    out.reactions = (reactionsOf.get(m.id) ?? []).map((r) => toApiReaction(r, user(r.user_id)));
    const widget = widgetSubmessage(m);
    out.submessages = [...(widget ? [widget] : []), ...(submessagesOf.get(m.id) ?? [])].map((s) => ({ ...s }));
    return out;
  });
}

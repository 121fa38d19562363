/**
 * Personal flags and read state (spec 3, 4.3–4.5, 4.17). Every change and its
 * update_message_flags event (api-notes §2.3) commit together through the outbox; the event
 * goes to the acting user's queues only.
 */
import { eventsInbox, type Actor } from '@zc/shared/contracts';
import { badRequest } from '@zc/shared/errors';
import { transaction, type Queryable } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import type { MessagesDeps } from '../deps.js';
import { EDITABLE_FLAGS, FLAG_BITS, HISTORICAL_FLAGS, isApiFlag, type FlagName } from '../lib/flags.js';
import { parseNarrow } from '../lib/narrow.js';
import { accessMessage, fetchRange, firstUnreadId, parseAnchor, viewerOf } from '../queries/get-messages.js';
import { overOwnRows, planNarrow } from '../queries/narrow-plan.js';
import { accessStreamById } from './read-model.js';
import { messageStore } from '../store/message-store.js';
import { readModelStore } from '../store/read-model-store.js';

type MessageDetail =
  | { type: 'stream'; stream_id: number; topic: string; unmuted_stream_msg: boolean; mentioned?: true }
  | { type: 'private'; user_ids: number[]; mentioned?: true };

/** message_details of a "read" removal: what a client needs to put the messages back into its unread counts. */
async function messageDetails(q: Queryable, userId: number, ids: readonly number[]): Promise<Record<string, MessageDetail>> {
  const rows = await messageStore.byIds(q, ids);
  const flags = await messageStore.userFlags(q, userId, ids);
  const recipients = new Map((await readModelStore.recipientsByIds(q, rows.filter((r) => r.stream_id === null).map((r) => r.recipient_id))).map((r) => [r.id, r]));
  const { rows: muted } = await q.query<{ stream_id: number }>('SELECT stream_id FROM messages.subscriber WHERE user_id = $1 AND is_muted', [userId]);
  const mutedStreams = new Set(muted.map((r) => r.stream_id));
  const out: Record<string, MessageDetail> = {};
  for (const m of rows) {
    const mentioned = ((flags.get(m.id) ?? 0) & (FLAG_BITS.mentioned | FLAG_BITS.wildcard_mentioned)) !== 0;
    let d: MessageDetail;
    if (m.stream_id !== null) {
      d = { type: 'stream', stream_id: m.stream_id, topic: m.topic, unmuted_stream_msg: !mutedStreams.has(m.stream_id) };
    } else {
      const members = new Set([...(recipients.get(m.recipient_id)?.user_ids ?? []), m.sender_id]);
      members.delete(userId);
      d = { type: 'private', user_ids: [...members].sort((a, b) => a - b) };
    }
    if (mentioned) d.mentioned = true;
    out[String(m.id)] = d;
  }
  return out;
}

export async function notifyFlagChange(q: Queryable, actor: Pick<Actor, 'realm_id' | 'user_id'>, op: 'add' | 'remove', flag: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const event: Record<string, unknown> = { type: 'update_message_flags', op, operation: op, flag, messages: ids, all: false };
  if (op === 'remove' && flag === 'read') event.message_details = await messageDetails(q, actor.user_id, ids);
  await addToOutbox(q, 'messages', eventsInbox.notify, { realm_id: actor.realm_id, users: [actor.user_id], event });
}

/** Zulip's checks on the flag and operation, with its messages. */
export function checkFlagChange(op: string, flag: string): { op: 'add' | 'remove'; flag: FlagName } {
  if (!isApiFlag(flag)) throw badRequest(`Invalid flag: '${flag}'`);
  if (!EDITABLE_FLAGS.includes(flag)) throw badRequest(`Flag not editable: '${flag}'`);
  if (op !== 'add' && op !== 'remove') throw badRequest(`Invalid message flag operation: '${op}'`);
  return { op, flag };
}

/**
 * Sets or clears the flag on messages the actor may read, inside the caller's transaction,
 * and queues the event. Messages the user may read but never received (a public stream's
 * history) get a `historical` row first, as Zulip does; `checkAccess` false means the caller
 * found the ids through the narrow planner, which already applied the access rules. Returns
 * the ids whose flag changed.
 */
async function applyFlagChange(
  tx: Queryable,
  actor: Actor,
  ids: readonly number[],
  change: { op: 'add' | 'remove'; flag: FlagName },
  checkAccess: boolean,
): Promise<number[]> {
  const { op, flag } = change;
  const bit = FLAG_BITS[flag];
  const existing = await messageStore.userFlags(tx, actor.user_id, ids);
  const missing = ids.filter((id) => !existing.has(id));
  if (checkAccess) for (const id of missing) await accessMessage(tx, viewerOf(actor), id);
  const historicalFlags = op === 'add' ? HISTORICAL_FLAGS | bit : HISTORICAL_FLAGS & ~bit;
  await messageStore.insertUserMessages(tx, missing.map(() => actor.user_id), missing, missing.map(() => historicalFlags));
  const createdChanged = (HISTORICAL_FLAGS & bit) === (op === 'add' ? 0 : bit) ? missing : [];
  const changed = await messageStore.changeFlag(tx, actor.user_id, ids.filter((id) => existing.has(id)), bit, op === 'add');
  const all = [...changed, ...createdChanged].sort((a, b) => a - b);
  await notifyFlagChange(tx, actor, op, flag, all);
  return all;
}

/**
 * POST /messages/flags. An id the user may not read fails the whole request with "Invalid
 * message(s)" and changes nothing. Returns the requested ids (Zulip's response); the event
 * lists only those whose flag actually changed.
 */
export async function doUpdateFlags(deps: MessagesDeps, actor: Actor, messageIds: readonly number[], opRaw: string, flagRaw: string): Promise<number[]> {
  const change = checkFlagChange(opRaw, flagRaw);
  const ids = [...new Set(messageIds)];
  await transaction(deps.pool, (tx) => applyFlagChange(tx, actor, ids, change, true));
  return messageIds as number[];
}

/** Zulip's MAX_MESSAGES_PER_UPDATE: the most messages one narrow update touches (one transaction). */
export const MAX_MESSAGES_PER_NARROW_UPDATE = 5000;

export interface NarrowFlagsRequest {
  actor: Actor;
  anchor: string | number;
  include_anchor: boolean;
  num_before: number;
  num_after: number;
  narrow: unknown;
  op: string;
  flag: string;
}

export interface NarrowFlagsReply {
  processed_count: number;
  updated_count: number;
  first_processed_id: number | null;
  last_processed_id: number | null;
  found_oldest: boolean;
  found_newest: boolean;
}

/**
 * POST /messages/flags/narrow (Zulip's update_message_flags_in_narrow): the range GET
 * /messages would return for the same anchor and narrow, clamped to
 * MAX_MESSAGES_PER_NARROW_UPDATE, gets the flag in one transaction. For `read` the range is
 * taken over the user's own rows: a message they never received is read already and cannot
 * be unread (Zulip keeps unread messages to the user's own), so a stream's history is
 * neither counted nor given rows. Other flags reach history, which gets rows as in
 * POST /messages/flags.
 */
export async function doUpdateFlagsForNarrow(deps: MessagesDeps, r: NarrowFlagsRequest): Promise<NarrowFlagsReply> {
  const change = checkFlagChange(r.op, r.flag);
  if (r.num_before > 0 && r.num_after > 0 && !r.include_anchor) throw badRequest('The anchor can only be excluded at an end of the range');
  const numBefore = Math.min(r.num_before, Math.max(MAX_MESSAGES_PER_NARROW_UPDATE - r.num_after, MAX_MESSAGES_PER_NARROW_UPDATE / 2));
  const numAfter = Math.min(r.num_after, MAX_MESSAGES_PER_NARROW_UPDATE - numBefore);
  const requested = parseAnchor(r.anchor, false);
  const terms = parseNarrow(r.narrow);
  await deps.directory.realmFor(r.actor);
  const planned = await planNarrow(deps.pool, viewerOf(r.actor), terms);
  const plan = change.flag === 'read' ? await overOwnRows(deps.pool, planned) : planned;
  const anchor = requested === 'first_unread' ? await firstUnreadId(deps.pool, plan) : requested;
  const { range, ids, updated } = await transaction(deps.pool, async (tx) => {
    const range = await fetchRange(tx, plan, anchor, r.include_anchor, numBefore, numAfter, deps.settings.searchWindowIds);
    const ids = range.rows.map((m) => m.id);
    return { range, ids, updated: ids.length === 0 ? [] : await applyFlagChange(tx, r.actor, ids, change, false) };
  });
  return {
    processed_count: ids.length,
    updated_count: updated.length,
    first_processed_id: ids[0] ?? null,
    last_processed_id: ids[ids.length - 1] ?? null,
    found_oldest: range.found_oldest,
    found_newest: range.found_newest,
  };
}

/**
 * POST /mark_all_as_read: batches, newest first, each in its own transaction with its own
 * event, until nothing is unread (true) or the time limit runs out first (false: the
 * client gets partially_completed and repeats the request).
 */
export async function doMarkAllAsRead(deps: MessagesDeps, actor: Actor): Promise<boolean> {
  const started = Date.now();
  const { markAllAsReadBatchSize: batch, markAllAsReadTimeLimitMs: limitMs } = deps.settings;
  for (;;) {
    const marked = await transaction(deps.pool, async (tx) => {
      const ids = await messageStore.markUnreadAsRead(tx, actor.user_id, { limit: batch });
      await notifyFlagChange(tx, actor, 'add', 'read', ids);
      return ids.length;
    });
    if (marked < batch) return true;
    if (Date.now() - started >= limitMs) return false;
  }
}

/** POST /mark_stream_as_read. */
export async function doMarkStreamAsRead(deps: MessagesDeps, actor: Actor, streamId: number): Promise<void> {
  const stream = await accessStreamById(deps, actor, streamId);
  await transaction(deps.pool, async (tx) => {
    const ids = await messageStore.markUnreadAsRead(tx, actor.user_id, { limit: 1_000_000, recipientId: stream.recipient_id });
    await notifyFlagChange(tx, actor, 'add', 'read', ids);
  });
}

/** POST /mark_topic_as_read; a topic the user has no messages in is an error, as in Zulip. */
export async function doMarkTopicAsRead(deps: MessagesDeps, actor: Actor, streamId: number, topic: string): Promise<void> {
  const stream = await accessStreamById(deps, actor, streamId);
  if (!(await messageStore.hasRowsInTopic(deps.pool, actor.user_id, stream.recipient_id, topic))) throw badRequest(`No such topic '${topic}'`);
  await transaction(deps.pool, async (tx) => {
    const ids = await messageStore.markUnreadAsRead(tx, actor.user_id, { limit: 1_000_000, recipientId: stream.recipient_id, topic });
    await notifyFlagChange(tx, actor, 'add', 'read', ids);
  });
}

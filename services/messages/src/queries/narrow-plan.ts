/**
 * Turns a checked narrow into SQL over messages, with Zulip's history visibility:
 *
 * - Whole-stream history ("messages" mode, reading messages.message directly): only when the
 *   narrow names one stream the viewer may read in full — a public stream for a non-guest,
 *   or a stream they are subscribed to whose history is public to subscribers — or
 *   `streams:public` for a non-guest. Messages they did not receive get `read, historical`.
 * - Everything else ("user_messages" mode): the viewer's own per-user rows only, minus every
 *   stream they may not read now (private streams they left or were removed from, and for
 *   guests every stream they are not subscribed to). That re-check on every query is the
 *   CVE-2024-27286 fix: a leftover row never grants access.
 *
 * Operand values only ever reach SQL as parameters; the fragments are fixed text.
 */
import type { Queryable } from '@zc/shared/db';
import { HISTORICAL_FLAGS, FLAG_BITS } from '../lib/flags.js';
import { badNarrow, type Term } from '../lib/narrow.js';
import { directoryRows, readModelStore, type StreamRow, type UserRow } from '../store/read-model-store.js';

export interface Viewer {
  realmId: number;
  userId: number;
  isGuest: boolean;
}

/** Collects parameters and hands out their placeholders. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

type Condition = (p: SqlParams, flags: string) => string;

export interface NarrowPlan {
  mode: 'messages' | 'user_messages';
  viewer: Viewer;
  conditions: Condition[];
  /** Stream recipients the viewer may not read now (user_messages mode). */
  excludedRecipients: number[];
  /** Positive keyword-search operands (for highlighting). */
  search: string[];
}

export interface BuiltQuery {
  /** A WITH clause to put before SELECT ('' when none). */
  with: string;
  /** FROM and JOIN clauses. */
  from: string;
  where: string[];
  /** The message id column to order and compare anchors with (index-friendly per mode). */
  idCol: string;
  /** The viewer's flag bits for the row. */
  flags: string;
}

const negate = (c: Condition, negated: boolean): Condition => (negated ? (p, f) => `NOT (${c(p, f)})` : c);
const never: Condition = () => 'FALSE';

/** Stream lookups of one plan, by operand: the planner asks about the same stream more than once. */
type StreamMemo = Map<string, Promise<StreamRow | undefined>>;

async function streamOf(q: Queryable, viewer: Viewer, operand: string | number | number[], memo: StreamMemo): Promise<StreamRow> {
  const key = String(operand);
  let found = memo.get(key);
  if (!found) {
    found =
      typeof operand === 'number' || /^\d+$/.test(key)
        ? readModelStore.streamById(q, viewer.realmId, Number(operand)).then((s) => s ?? readModelStore.streamByName(q, viewer.realmId, key))
        : readModelStore.streamByName(q, viewer.realmId, key);
    memo.set(key, found);
  }
  const s = await found;
  if (!s) throw badNarrow(`unknown stream ${key}`);
  return s;
}

async function usersOf(q: Queryable, viewer: Viewer, operand: string | number | number[], what: string): Promise<UserRow[]> {
  const ids: number[] = [];
  const emails: string[] = [];
  const items = Array.isArray(operand) ? operand : typeof operand === 'number' ? [operand] : operand.split(',').map((s) => s.trim()).filter(Boolean);
  for (const x of items) {
    if (typeof x === 'number' || /^\d+$/.test(x)) ids.push(Number(x));
    else emails.push(x);
  }
  const found = [...(await directoryRows.usersByIds(q, viewer.realmId, ids)), ...(await directoryRows.usersByEmails(q, viewer.realmId, emails, { deliveryEmails: true }))];
  const byId = new Map(found.map((u) => [u.id, u]));
  const missing =
    ids.some((id) => !byId.has(id)) ||
    emails.some((e) => !found.some((u) => u.email.toLowerCase() === e.toLowerCase() || u.delivery_email.toLowerCase() === e.toLowerCase()));
  if (missing || items.length === 0) throw badNarrow(`unknown user ${what}${String(operand)}`);
  return [...byId.values()];
}

/** Whether the viewer may read every message of the stream (not just the ones they received). */
export async function canReadWholeStream(q: Queryable, viewer: Viewer, s: StreamRow): Promise<boolean> {
  if (!s.invite_only && !viewer.isGuest) return true;
  if (!s.history_public_to_subscribers) return false;
  return readModelStore.isSubscribed(q, s.id, viewer.userId);
}

/** The 1:1 (or self) conversation between the viewer and `other`. */
async function conversationWith(q: Queryable, viewer: Viewer, other: number): Promise<Condition> {
  const rids = await readModelStore.findPersonalRecipients(q, [viewer.userId, other]);
  const mine = rids.get(viewer.userId) ?? -1;
  const theirs = rids.get(other) ?? -1;
  const me = viewer.userId;
  if (other === me) return (p) => `(m.recipient_id = ${p.add(mine)} AND m.sender_id = ${p.add(me)})`;
  return (p) =>
    `((m.sender_id = ${p.add(me)} AND m.recipient_id = ${p.add(theirs)}) OR (m.sender_id = ${p.add(other)} AND m.recipient_id = ${p.add(mine)}))`;
}

async function conditionFor(q: Queryable, viewer: Viewer, t: Term, publicRecipients: () => Promise<number[]>, streams: StreamMemo): Promise<Condition> {
  const me = viewer.userId;
  switch (t.operator) {
    case 'stream': {
      const s = await streamOf(q, viewer, t.operand, streams);
      return (p) => `m.recipient_id = ${p.add(s.recipient_id)}`;
    }
    case 'streams': {
      const rids = await publicRecipients();
      return (p) => `m.recipient_id = ANY(${p.add(rids)}::bigint[])`;
    }
    case 'topic': {
      const topic = String(t.operand);
      return (p) => `(m.stream_id IS NOT NULL AND lower(m.topic) = lower(${p.add(topic)}))`;
    }
    case 'sender': {
      const [u] = await usersOf(q, viewer, t.operand, '');
      const id = (u as UserRow).id;
      return (p) => `m.sender_id = ${p.add(id)}`;
    }
    case 'dm': {
      const others = (await usersOf(q, viewer, t.operand, 'in ')).map((u) => u.id).filter((id) => id !== me);
      if (others.length <= 1) return conversationWith(q, viewer, others[0] ?? me);
      const huddle = await readModelStore.findHuddleRecipient(q, viewer.realmId, [...others, me].sort((a, b) => a - b));
      if (huddle === undefined) return never;
      return (p) => `m.recipient_id = ${p.add(huddle)}`;
    }
    case 'dm-including':
    case 'group-pm-with': {
      const [u] = await usersOf(q, viewer, t.operand, '');
      const other = (u as UserRow).id;
      const huddles = await readModelStore.huddlesIncluding(q, viewer.realmId, [...new Set([other, me])]);
      if (t.operator === 'group-pm-with') return (p) => `m.recipient_id = ANY(${p.add(huddles)}::bigint[])`;
      if (other === me) return () => 'm.stream_id IS NULL';
      const pair = await conversationWith(q, viewer, other);
      return (p, f) => `(m.stream_id IS NULL AND (m.recipient_id = ANY(${p.add(huddles)}::bigint[]) OR ${pair(p, f)}))`;
    }
    case 'is':
      switch (t.operand) {
        case 'dm':
        case 'private':
          return () => 'm.stream_id IS NULL';
        case 'starred':
          return (_p, f) => `(${f} & ${FLAG_BITS.starred}) <> 0`;
        case 'unread':
          return (_p, f) => `(${f} & ${FLAG_BITS.read}) = 0`;
        case 'mentioned':
          return (_p, f) => `(${f} & ${FLAG_BITS.mentioned | FLAG_BITS.wildcard_mentioned}) <> 0`;
        case 'alerted':
          return (_p, f) => `(${f} & ${FLAG_BITS.has_alert_word}) <> 0`;
        case 'resolved':
          return (p) => `m.topic LIKE ${p.add('✔ %')}`;
        default:
          throw badNarrow(`unknown 'is' operand ${String(t.operand)}`);
      }
    case 'has':
      if (t.operand === 'link') return () => 'm.has_link';
      if (t.operand === 'image') return () => 'm.has_image';
      return () => 'm.has_attachment';
    case 'id': {
      const id = Number(t.operand);
      return (p) => `m.id = ${p.add(id)}`;
    }
    case 'near':
      // A viewing hint (the client anchors on it); it does not filter.
      return () => 'TRUE';
    case 'search': {
      const text = String(t.operand);
      return (p) => `m.search_tsv @@ plainto_tsquery('english', ${p.add(text)})`;
    }
  }
}

/** Resolves operands against the read models and chooses the query mode (see the file comment). */
export async function planNarrow(q: Queryable, viewer: Viewer, terms: readonly Term[]): Promise<NarrowPlan> {
  let publicRids: number[] | undefined;
  const publicRecipients = async () => (publicRids ??= await readModelStore.publicStreamRecipients(q, viewer.realmId));
  const streams: StreamMemo = new Map();
  const conditions: Condition[] = [];
  for (const t of terms) conditions.push(negate(await conditionFor(q, viewer, t, publicRecipients, streams), t.negated));

  let mode: NarrowPlan['mode'] = 'user_messages';
  const streamTerm = terms.find((t) => t.operator === 'stream' && !t.negated);
  if (streamTerm) {
    if (await canReadWholeStream(q, viewer, await streamOf(q, viewer, streamTerm.operand, streams))) mode = 'messages';
  } else if (!viewer.isGuest && terms.some((t) => t.operator === 'streams' && !t.negated)) {
    mode = 'messages';
  }
  const excludedRecipients = mode === 'messages' ? [] : await readModelStore.inaccessibleStreamRecipients(q, viewer.realmId, viewer.userId, viewer.isGuest);
  const search = terms.filter((t) => t.operator === 'search' && !t.negated).map((t) => String(t.operand));
  return { mode, viewer, conditions, excludedRecipients, search };
}

/** The plan over the viewer's own rows only (same access rules), for what only a row can hold: unread, or a read flag to change. */
export async function overOwnRows(q: Queryable, plan: NarrowPlan): Promise<NarrowPlan> {
  if (plan.mode === 'user_messages') return plan;
  const { realmId, userId, isGuest } = plan.viewer;
  return { ...plan, mode: 'user_messages', excludedRecipients: await readModelStore.inaccessibleStreamRecipients(q, realmId, userId, isGuest) };
}

/**
 * Which keyword-search matches a query considers: an id range (`above` < id <= `upTo`), or
 * given ids. Fetching a match costs a visit to its message's heap page, so a common word's
 * tens of thousands of matches must not all be fetched to show the newest hundred.
 */
export type HitsScope = { above: number; upTo: number } | { ids: readonly number[] };

/** FROM/WHERE of a plan; the caller adds anchor bounds, order and limit. */
export function buildQuery(plan: NarrowPlan, p: SqlParams, hitsScope?: HitsScope): BuiltQuery {
  const me = p.add(plan.viewer.userId);
  // A keyword search starts from the GIN index's matches: walking the reader's history
  // newest-first and testing each message would read most of it for a rare word. Within a
  // scope, PostgreSQL ANDs the GIN bitmap with the primary key's (ids follow insertion, so
  // the range is a contiguous run of pages) and visits only the matches inside it.
  const searching = plan.search.length > 0;
  const scope =
    hitsScope === undefined || !searching
      ? ''
      : 'ids' in hitsScope
        ? ` AND id = ANY(${p.add(hitsScope.ids)}::bigint[])`
        : ` AND id > ${p.add(hitsScope.above)} AND id <= ${p.add(hitsScope.upTo)}`;
  const withClause = searching
    ? `WITH hits AS MATERIALIZED (SELECT id FROM messages.message WHERE search_tsv @@ plainto_tsquery('english', ${p.add(plan.search.join(' '))})${scope}) `
    : '';
  const source = searching ? 'hits JOIN messages.message m ON m.id = hits.id' : 'messages.message m';
  if (plan.mode === 'messages') {
    const flags = `COALESCE(um.flags, ${HISTORICAL_FLAGS})`;
    return {
      with: withClause,
      from: `${source} LEFT JOIN messages.user_message um ON um.user_id = ${me} AND um.message_id = m.id`,
      where: plan.conditions.map((c) => c(p, flags)),
      // Ordering by the matches' own ids lets PostgreSQL take the top N of the (few) matches
      // and look each message up, instead of walking the whole history to merge with them.
      idCol: searching ? 'hits.id' : 'm.id',
      flags,
    };
  }
  const flags = 'um.flags';
  const where = [`um.user_id = ${me}`, ...plan.conditions.map((c) => c(p, flags))];
  if (plan.excludedRecipients.length) where.push(`m.recipient_id <> ALL(${p.add(plan.excludedRecipients)}::bigint[])`);
  if (searching) return { with: withClause, from: `${source} JOIN messages.user_message um ON um.message_id = m.id`, where, idCol: 'hits.id', flags };
  return { with: '', from: 'messages.user_message um JOIN messages.message m ON m.id = um.message_id', where, idCol: 'um.message_id', flags };
}

/**
 * GET /messages (spec 4.9), GET /messages/{id} and GET /messages/matches_narrow (spec 4.7).
 * The anchor and found_* rules follow Zulip's get_messages_backend: anchors are clamped
 * message ids, `newest` is a number larger than any id, and found_oldest/found_newest only
 * promise what the fetched rows prove.
 */
import { LIMITS, isGuest, type Actor } from '@zc/shared/contracts';
import { badRequest, isAppError } from '@zc/shared/errors';
import type { Queryable } from '@zc/shared/db';
import type { MessagesDeps } from '../deps.js';
import { topicLinker } from '../actions/render-message.js';
import { FLAG_BITS, flagNames } from '../lib/flags.js';
import { toApiMessage } from '../lib/message-view.js';
import type { TopicLink } from '../lib/render.js';
import { parseNarrow } from '../lib/narrow.js';
import type { MessageRow } from '../store/message-store.js';
import { messageStore } from '../store/message-store.js';
import { readModelStore } from '../store/read-model-store.js';
import { hydrateMessages } from './hydrate.js';
import { buildQuery, canReadWholeStream, overOwnRows, planNarrow, SqlParams, type HitsScope, type NarrowPlan, type Viewer } from './narrow-plan.js';

/** Zulip's LARGER_THAN_MAX_MESSAGE_ID: the anchor `newest` stands for. */
export const LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000;

export const invalidMessage = () => badRequest('Invalid message(s)');

const ROW_COLS = `m.id, m.realm_id, m.sender_id, m.recipient_id, m.stream_id, m.topic, m.content, m.rendered_content, m.rendered_content_version,
  m.date_sent, m.sending_client, m.is_me_message, m.has_link, m.has_image, m.has_attachment, m.edit_history, m.last_edit_time`;

type FetchedRow = MessageRow & { viewer_flags: number };

/** The anchor as a message id, or 'first_unread' to compute. */
export function parseAnchor(anchor: string | number | null, useFirstUnread: boolean): number | 'first_unread' {
  if (useFirstUnread) return 'first_unread';
  if (anchor === null) throw badRequest("Missing 'anchor' argument.");
  if (anchor === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (anchor === 'oldest') return 0;
  if (anchor === 'first_unread') return 'first_unread';
  const n = typeof anchor === 'number' ? anchor : /^-?\d+$/.test(anchor.trim()) ? Number(anchor) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw badRequest('Invalid anchor');
  return Math.min(Math.max(n, 0), LARGER_THAN_MAX_MESSAGE_ID);
}

export function viewerOf(actor: Actor): Viewer {
  return { realmId: actor.realm_id, userId: actor.user_id, isGuest: isGuest(actor) };
}

type Bound = { op: '<' | '<=' | '>=' | '>' | '='; id: number };

/** Ids in the first keyword-search window unless configured (ZC_SEARCH_WINDOW_IDS); each further window is four times wider. */
const SEARCH_WINDOW = 10_000;

async function fetchRows(
  q: Queryable,
  plan: NarrowPlan,
  bound: Bound,
  order: 'ASC' | 'DESC',
  limit: number,
  extra?: string,
  firstWindow = SEARCH_WINDOW,
): Promise<FetchedRow[]> {
  if (limit <= 0) return [];
  if (plan.search.length === 0) return fetchScoped(q, plan, bound, order, limit, extra);
  // Keyword search: windows of ids moving away from the anchor, nearest first, until enough
  // rows are found; a common word then costs the matches of the first window or two, not all
  // of them (narrow-plan.ts, HitsScope). Windows are disjoint and taken in order, so their
  // rows concatenate in order.
  const maxId = await messageStore.maxMessageId(q);
  const out: FetchedRow[] = [];
  if (order === 'DESC') {
    let upTo = Math.min(bound.id, maxId);
    for (let width = firstWindow; upTo > 0 && out.length < limit; width *= 4) {
      const above = Math.max(0, upTo - width);
      out.push(...(await fetchScoped(q, plan, bound, order, limit - out.length, extra, { above, upTo })));
      upTo = above;
    }
  } else {
    let above = Math.max(0, bound.id - 1);
    for (let width = firstWindow; above < maxId && out.length < limit; width *= 4) {
      const upTo = above + width;
      out.push(...(await fetchScoped(q, plan, bound, order, limit - out.length, extra, { above, upTo })));
      above = upTo;
    }
  }
  return out;
}

async function fetchScoped(q: Queryable, plan: NarrowPlan, bound: Bound, order: 'ASC' | 'DESC', limit: number, extra?: string, scope?: HitsScope): Promise<FetchedRow[]> {
  const p = new SqlParams();
  const b = buildQuery(plan, p, scope);
  const where = [...b.where, `${b.idCol} ${bound.op} ${p.add(bound.id)}`];
  if (extra) where.push(extra.replace('$flags', b.flags));
  const sql = `${b.with}SELECT ${ROW_COLS}, ${b.flags} AS viewer_flags FROM ${b.from} WHERE ${where.join(' AND ')} ORDER BY ${b.idCol} ${order} LIMIT ${p.add(limit)}`;
  const { rows } = await q.query<FetchedRow>(sql, p.values);
  return rows;
}

export async function firstUnreadId(q: Queryable, plan: NarrowPlan): Promise<number> {
  // An unread message always has the reader's row, so the search runs over their rows (the
  // partial unread index) even when the narrow reads a whole stream.
  const rows = await fetchRows(q, await overOwnRows(q, plan), { op: '>=', id: 0 }, 'ASC', 1, `($flags & ${FLAG_BITS.read}) = 0`);
  return rows[0]?.id ?? LARGER_THAN_MAX_MESSAGE_ID;
}

/**
 * match_content/match_subject of rows: the rendered content and the HTML-escaped topic,
 * with the narrow's keyword-search matches wrapped in <span class="highlight"> by
 * PostgreSQL's ts_headline (same parser and stemming as the search itself).
 */
async function highlights(q: Queryable, ids: readonly number[], search: readonly string[]): Promise<Map<number, { match_content: string; match_subject: string }>> {
  if (ids.length === 0) return new Map();
  const escapedTopic = `replace(replace(replace(replace(replace(m.topic, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')`;
  const { rows } = search.length
    ? await q.query<{ id: number; match_content: string; match_subject: string }>(
        `SELECT m.id,
           ts_headline('english', m.rendered_content, plainto_tsquery('english', $2), $3) AS match_content,
           ts_headline('english', ${escapedTopic}, plainto_tsquery('english', $2), $3) AS match_subject
         FROM messages.message m WHERE m.id = ANY($1::bigint[])`,
        [ids, search.join(' '), 'HighlightAll=TRUE, StartSel="<span class=""highlight"">", StopSel=</span>'],
      )
    : await q.query<{ id: number; match_content: string; match_subject: string }>(
        `SELECT m.id, m.rendered_content AS match_content, ${escapedTopic} AS match_subject FROM messages.message m WHERE m.id = ANY($1::bigint[])`,
        [ids],
      );
  return new Map(rows.map((r) => [r.id, { match_content: r.match_content, match_subject: r.match_subject }]));
}

export interface ListRequest {
  actor: Actor;
  anchor: string | number | null;
  include_anchor: boolean;
  num_before: number;
  num_after: number;
  narrow: unknown;
  apply_markdown: boolean;
  client_gravatar: boolean;
  use_first_unread_anchor: boolean;
}

export async function listMessages(deps: MessagesDeps, r: ListRequest): Promise<Record<string, unknown>> {
  if (r.num_before < 0 || r.num_after < 0) throw badRequest('Invalid num_before or num_after');
  if (r.num_before + r.num_after > LIMITS.maxMessagesPerFetch) {
    throw badRequest(`Too many messages requested (maximum ${LIMITS.maxMessagesPerFetch}).`);
  }
  const requested = parseAnchor(r.anchor, r.use_first_unread_anchor);
  const terms = parseNarrow(r.narrow);
  const q = deps.pool;
  // Independent reads go out together, each on its own pool connection.
  const [realm, plan] = await Promise.all([deps.directory.realmFor(r.actor), planNarrow(q, viewerOf(r.actor), terms)]);
  const anchor = requested === 'first_unread' ? await firstUnreadId(q, plan) : requested;
  const range = await fetchRange(q, plan, anchor, r.include_anchor, r.num_before, r.num_after, deps.settings.searchWindowIds);
  const messages = await renderForViewer(q, realm.subdomain, r.actor.realm_id, range.rows, plan.search, r, await topicLinker(deps, realm.id));
  return {
    anchor,
    found_anchor: range.found_anchor,
    found_oldest: range.found_oldest,
    found_newest: range.found_newest,
    history_limited: false,
    messages,
  };
}

export interface FetchedRange {
  /** Oldest first. */
  rows: FetchedRow[];
  found_anchor: boolean;
  found_oldest: boolean;
  found_newest: boolean;
}

/**
 * The rows of a narrow around an anchor (a message id), with what they prove about the ends
 * of the narrow: GET /messages and POST /messages/flags/narrow select the same range.
 */
export async function fetchRange(
  q: Queryable,
  plan: NarrowPlan,
  anchor: number,
  includeAnchor: boolean,
  numBeforeRequested: number,
  numAfterRequested: number,
  searchWindowIds: number,
): Promise<FetchedRange> {
  const anchoredToLeft = anchor === 0;
  const anchoredToRight = anchor === LARGER_THAN_MAX_MESSAGE_ID;
  const numBefore = anchoredToLeft ? 0 : numBeforeRequested;
  const numAfter = anchoredToRight ? 0 : numAfterRequested;
  // Zulip's limit_query_to_range: the anchor row rides with the "after" query (or the
  // "before" one when there is no after query), so at most two queries run.
  let before: FetchedRow[] = [];
  let after: FetchedRow[] = [];
  if (numBefore > 0 && numAfter > 0) {
    [before, after] = await Promise.all([
      fetchRows(q, plan, { op: '<', id: anchor }, 'DESC', numBefore, undefined, searchWindowIds),
      fetchRows(q, plan, { op: includeAnchor ? '>=' : '>', id: anchor }, 'ASC', numAfter + (includeAnchor ? 1 : 0), undefined, searchWindowIds),
    ]);
  } else if (numBefore > 0) {
    before = await fetchRows(q, plan, { op: includeAnchor ? '<=' : '<', id: anchor }, 'DESC', numBefore + (includeAnchor && !anchoredToRight ? 1 : 0), undefined, searchWindowIds);
  } else if (numAfter > 0) {
    after = await fetchRows(q, plan, { op: includeAnchor ? '>=' : '>', id: anchor }, 'ASC', numAfter + (includeAnchor ? 1 : 0), undefined, searchWindowIds);
  } else if (includeAnchor) {
    after = await fetchRows(q, plan, { op: '=', id: anchor }, 'ASC', 1, undefined, searchWindowIds);
  }
  const all = [...before.reverse(), ...after];
  const beforeRows = all.filter((m) => m.id < anchor).slice(-numBefore || all.length);
  const anchorRows = all.filter((m) => m.id === anchor);
  const afterRows = all.filter((m) => m.id > anchor).slice(0, numAfter);
  return {
    rows: [...(numBefore ? beforeRows : []), ...anchorRows, ...(numAfter ? afterRows : [])],
    found_anchor: anchorRows.length === 1,
    found_oldest: anchoredToLeft || (numBefore ? beforeRows : []).length < numBefore,
    found_newest: anchoredToRight || (numAfter ? afterRows : []).length < numAfter,
  };
}

async function renderForViewer(
  q: Queryable,
  realmStr: string,
  realmId: number,
  rows: readonly FetchedRow[],
  search: readonly string[],
  opts: { apply_markdown: boolean; client_gravatar: boolean },
  topicLinks: (topic: string) => TopicLink[],
): Promise<Record<string, unknown>[]> {
  const [events, marks] = await Promise.all([
    hydrateMessages(q, realmId, realmStr, rows, topicLinks),
    search.length ? highlights(q, rows.map((m) => m.id), search) : undefined,
  ]);
  return events.map((e, i) => {
    const m = toApiMessage(e, flagNames((rows[i] as FetchedRow).viewer_flags), opts);
    const h = marks?.get(e.id);
    return h ? { ...m, ...h } : m;
  });
}

/** Zulip's has_message_access, for one message by id: the same rules as the narrow query modes. */
export async function accessMessage(q: Queryable, viewer: Viewer, messageId: number): Promise<{ row: MessageRow; flags: number | undefined }> {
  const [row] = await messageStore.byIds(q, [messageId]);
  if (!row || row.realm_id !== viewer.realmId) throw invalidMessage();
  const flags = (await messageStore.userFlags(q, viewer.userId, [messageId])).get(messageId);
  if (row.stream_id === null) {
    if (flags === undefined) throw invalidMessage();
    return { row, flags };
  }
  const stream = await readModelStore.streamById(q, viewer.realmId, row.stream_id);
  if (!stream) throw invalidMessage();
  if (await canReadWholeStream(q, viewer, stream)) return { row, flags };
  // Protected history: only what they received, and only while still subscribed.
  if (flags !== undefined && !stream.history_public_to_subscribers && (await readModelStore.isSubscribed(q, stream.id, viewer.userId))) return { row, flags };
  throw invalidMessage();
}

/** Whether the actor may read any of these messages (the uploads service's download rule); newest first, stops at the first. */
export async function canReadAnyMessage(deps: MessagesDeps, actor: Actor, messageIds: readonly number[]): Promise<boolean> {
  const viewer = viewerOf(actor);
  for (const id of [...new Set(messageIds)].sort((a, b) => b - a)) {
    try {
      await accessMessage(deps.pool, viewer, id);
      return true;
    } catch (e) {
      if (!isAppError(e)) throw e;
    }
  }
  return false;
}

export async function getMessage(deps: MessagesDeps, actor: Actor, messageId: number, applyMarkdown: boolean): Promise<{ message: Record<string, unknown>; raw_content: string }> {
  const realm = await deps.directory.realmFor(actor);
  const { row, flags } = await accessMessage(deps.pool, viewerOf(actor), messageId);
  const [message] = await renderForViewer(deps.pool, realm.subdomain, actor.realm_id, [{ ...row, viewer_flags: flags ?? FLAG_BITS.read | FLAG_BITS.historical }], [], {
    apply_markdown: applyMarkdown,
    client_gravatar: false,
  }, await topicLinker(deps, realm.id));
  return { message: message as Record<string, unknown>, raw_content: row.content };
}

/** GET /messages/matches_narrow: which of `ids` match, with their highlighted content and topic. */
export async function matchesNarrow(deps: MessagesDeps, actor: Actor, ids: readonly number[], narrow: unknown): Promise<Record<string, { match_content: string; match_subject: string }>> {
  const terms = parseNarrow(narrow);
  await deps.directory.realmFor(actor);
  const plan = await planNarrow(deps.pool, viewerOf(actor), terms);
  const p = new SqlParams();
  // Only these ids' keyword matches are of interest (not every match of the word).
  const b = buildQuery(plan, p, { ids });
  const { rows } = await deps.pool.query<{ id: number }>(
    `${b.with}SELECT m.id FROM ${b.from} WHERE ${[...b.where, `m.id = ANY(${p.add(ids)}::bigint[])`].join(' AND ')}`,
    p.values,
  );
  const matched = rows.map((r) => r.id);
  const marks = await highlights(deps.pool, matched, plan.search);
  return Object.fromEntries(matched.map((id) => [String(id), marks.get(id) as { match_content: string; match_subject: string }]));
}

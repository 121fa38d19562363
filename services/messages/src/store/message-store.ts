/** Messages, their per-user rows (Zulip's UserMessage) and idempotency keys. */
import type { EditHistoryEntry } from '@zc/shared/contracts';
import { sqlArray, type Queryable } from '@zc/shared/db';

export interface NewMessage {
  id: number;
  realm_id: number;
  sender_id: number;
  recipient_id: number;
  stream_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  rendered_content_version: number;
  date_sent: Date;
  sending_client: string;
  is_me_message: boolean;
  has_link: boolean;
  has_image: boolean;
  has_attachment: boolean;
}

/** A stored message; the edit fields are null until its first edit (spec 2.2, 2.3). */
export type MessageRow = NewMessage & { edit_history?: EditHistoryEntry[] | null; last_edit_time?: Date | null };

export interface UserMessageRow {
  user_id: number;
  message_id: number;
  flags: number;
}

const MESSAGE_COLS = `id, realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, rendered_content_version,
  date_sent, sending_client, is_me_message, has_link, has_image, has_attachment`;

/** The message rows as one array per column, in the order both bulk inserts list them. */
function messageColumns(ms: ReadonlyArray<Omit<NewMessage, 'id'>>): unknown[] {
  return [
    sqlArray(ms.map((m) => m.realm_id)),
    sqlArray(ms.map((m) => m.sender_id)),
    sqlArray(ms.map((m) => m.recipient_id)),
    sqlArray(ms.map((m) => m.stream_id)),
    ms.map((m) => m.topic),
    ms.map((m) => m.content),
    ms.map((m) => m.rendered_content),
    sqlArray(ms.map((m) => m.rendered_content_version)),
    ms.map((m) => m.date_sent),
    ms.map((m) => m.sending_client),
    sqlArray(ms.map((m) => m.is_me_message)),
    sqlArray(ms.map((m) => m.has_link)),
    sqlArray(ms.map((m) => m.has_image)),
    sqlArray(ms.map((m) => m.has_attachment)),
  ];
}

export const messageStore = {
  /**
   * Takes the realm's send lock (held until commit) and draws `n` new message ids, in one
   * round trip. The lock call sits in WHERE, which PostgreSQL evaluates before the target
   * list of the same row, so no id is drawn before the lock is held (actions/send-writer.ts).
   */
  async lockRealmAndAllocateIds(q: Queryable, lockClass: number, realmId: number, n: number): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>(
      "SELECT nextval('messages.message_id_seq') AS id FROM generate_series(1, $3) WHERE pg_advisory_xact_lock($1::int, $2::int) IS NOT NULL",
      [lockClass, realmId, n],
    );
    return rows.map((r) => r.id).sort((a, b) => a - b);
  },

  /**
   * A batch of messages, every recipient's row and their outbox events in one statement
   * (data-modifying CTEs: one round trip however many messages and recipients). The outbox
   * rows have the columns `addToOutbox` writes; batching them here is what keeps a send
   * transaction short under the realm lock. Each message is new and lists each recipient
   * once (`SendWriter.submit`), so its rows are inserted without ON CONFLICT (see insertSends).
   */
  async insertBatch(
    q: Queryable,
    ms: readonly NewMessage[],
    rows: { userIds: readonly number[]; messageIds: readonly number[]; flags: readonly number[] },
    outbox: ReadonlyArray<{ subject: string; payload: string; carrier: string }>,
  ): Promise<void> {
    if (ms.length === 0) return;
    await q.query(
      `WITH m AS (
         INSERT INTO messages.message (${MESSAGE_COLS})
         SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::text[], $7::text[], $8::text[],
           $9::int[], $10::timestamptz[], $11::text[], $12::boolean[], $13::boolean[], $14::boolean[], $15::boolean[])),
       um AS (
         INSERT INTO messages.user_message (user_id, message_id, flags)
         SELECT * FROM unnest($16::bigint[], $17::bigint[], $18::int[]))
       INSERT INTO messages.outbox (subject, payload, trace_carrier)
       SELECT s, p::jsonb, c::jsonb FROM unnest($19::text[], $20::text[], $21::text[]) WITH ORDINALITY AS x(s, p, c, ord) ORDER BY ord`,
      [
        sqlArray(ms.map((m) => m.id)),
        ...messageColumns(ms),
        sqlArray(rows.userIds),
        sqlArray(rows.messageIds),
        sqlArray(rows.flags),
        outbox.map((o) => o.subject),
        outbox.map((o) => o.payload),
        outbox.map((o) => o.carrier),
      ],
    );
  },

  /**
   * Writes a batch of sends as ONE autocommit statement (one round trip, one commit, no
   * BEGIN/COMMIT): takes the realm's send lock, checks the realm's read-model version, draws
   * the ids, and inserts the messages, every recipient's row and the outbox events.
   *
   * - Order: the statement's implicit transaction holds the transaction-level advisory lock
   *   until it commits, as an explicit one would. The lock call and nextval share one CASE,
   *   which evaluates its condition first, so no id is drawn before the lock is held.
   * - Rows refer to their message by its 1-based position in `ms` (`ord`); ids are matched to
   *   positions in id order, so the batch's messages get increasing ids in batch order.
   * - Outbox payloads are JSON text written without the id; `idPath` names where the message's
   *   id goes (jsonb_set), so the events are built before the ids exist.
   * - Per-user rows: plain inserts. The messages are new and each lists a recipient once
   *   (`SendWriter.submit`), so no row can conflict; ON CONFLICT DO NOTHING made every row a
   *   speculative insertion (a unique-index probe before the insert and a confirmation record
   *   after it), which cost PostgreSQL about twice the time of a plain insert for 10,000 rows.
   * - One plan: a row per message comes from unnest of a per-message array, not from
   *   generate_series(1, n). For a parameter the planner guesses 1,000 rows of generate_series
   *   (10 of unnest), so the plan it could keep for every batch looked dearer than one made
   *   for the batch at hand, and PostgreSQL planned the statement afresh at every bind: 0.4 ms
   *   on every send's way (log_min_duration_statement, 100 sends/s), 0.09 ms with the kept
   *   plan, whose execution took as long (single sends, bursts of 64, a 10,000-recipient
   *   stream). The arrays have exactly n elements; `LIMIT $3` only keeps n a parameter.
   * - It answers the outbox rows' ids (in the order given) and the transaction's id, so that
   *   the writer can hand its rows to the relay (outbox LocalOutboxWake.written).
   * - Freshness: when `expectedVersion` is not null and the realm's read-model version differs
   *   (the checks read data that has changed since), nothing is written and `ids` is empty.
   *   The version is read in the statement's snapshot, before the lock is taken.
   */
  async insertSends(
    q: Queryable,
    o: {
      lockClass: number;
      realmId: number;
      expectedVersion: number | null;
      messages: ReadonlyArray<Omit<NewMessage, 'id'>>;
      rows: { userIds: readonly number[]; ords: readonly number[]; flags: readonly number[] };
      outbox: ReadonlyArray<{ subject: string; payload: string; ord: number; idPath: string; carrier: string }>;
      /** Leave the outbox NOTIFY out: the caller wakes its relay itself once this has committed (outbox LocalOutboxWake). */
      quiet?: boolean;
    },
  ): Promise<{ version: number; ids: number[]; outboxIds: number[]; txid: number | null }> {
    const ms = o.messages;
    // A named statement: each pooled connection parses and plans it once, not every batch (its
    // parsing and planning were a fifth of PostgreSQL's CPU for the bench database in a burst).
    const { rows } = await q.query<{ version: number; ids: number[] }>({
      name: 'messages-insert-sends',
      text: `WITH fresh AS MATERIALIZED (
         SELECT COALESCE((SELECT version FROM messages.read_model_version WHERE realm_id = $2), 0) AS version,
           set_config('zc.outbox_quiet', CASE WHEN $27::boolean THEN 'on' ELSE '' END, true) AS quiet),
       drawn AS MATERIALIZED (
         SELECT CASE WHEN pg_advisory_xact_lock($1::int, $2::int) IS NOT NULL THEN nextval('messages.message_id_seq') END AS id
         FROM unnest($5::bigint[]), fresh
         WHERE $4::bigint IS NULL OR fresh.version = $4::bigint
         LIMIT $3::int),
       ids AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY id) AS ord FROM drawn),
       m AS (
         INSERT INTO messages.message (${MESSAGE_COLS})
         SELECT ids.id, c.realm_id, c.sender_id, c.recipient_id, c.stream_id, c.topic, c.content, c.rendered_content, c.rendered_content_version,
           c.date_sent, c.sending_client, c.is_me_message, c.has_link, c.has_image, c.has_attachment
         FROM unnest($5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::int[],
           $13::timestamptz[], $14::text[], $15::boolean[], $16::boolean[], $17::boolean[], $18::boolean[]) WITH ORDINALITY
           AS c(realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, rendered_content_version,
                date_sent, sending_client, is_me_message, has_link, has_image, has_attachment, ord)
         JOIN ids ON ids.ord = c.ord),
       um AS (
         INSERT INTO messages.user_message (user_id, message_id, flags)
         SELECT u.user_id, ids.id, u.flags FROM unnest($19::bigint[], $20::int[], $21::int[]) AS u(user_id, ord, flags) JOIN ids ON ids.ord = u.ord),
       ob AS (
         INSERT INTO messages.outbox (subject, payload, trace_carrier)
         SELECT o.subject, jsonb_set(p.payload, o.path::text[], to_jsonb(ids.id)), o.carrier::jsonb
         FROM unnest($22::text[], $24::int[], $25::text[], $26::text[]) WITH ORDINALITY AS o(subject, ord, path, carrier, n)
         JOIN jsonb_array_elements($23::jsonb) WITH ORDINALITY AS p(payload, n) ON p.n = o.n
         JOIN ids ON ids.ord = o.ord
         ORDER BY o.n
         RETURNING id, txid)
       SELECT fresh.version, ARRAY(SELECT id FROM ids ORDER BY ord) AS ids,
         ARRAY(SELECT id FROM ob ORDER BY id) AS outbox_ids, (SELECT max(txid) FROM ob) AS txid FROM fresh`,
      values: [
        o.lockClass,
        o.realmId,
        ms.length,
        o.expectedVersion,
        ...messageColumns(ms),
        sqlArray(o.rows.userIds),
        sqlArray(o.rows.ords),
        sqlArray(o.rows.flags),
        o.outbox.map((x) => x.subject),
        // One JSON array, not a text[]: node-postgres escapes every quote of every element of
        // an array parameter, and event payloads are mostly quotes (most of what a send escaped).
        `[${o.outbox.map((x) => x.payload).join(',')}]`,
        sqlArray(o.outbox.map((x) => x.ord)),
        o.outbox.map((x) => x.idPath),
        o.outbox.map((x) => x.carrier),
        o.quiet === true,
      ],
    });
    const row = rows[0] as { version: number; ids: number[]; outbox_ids: number[]; txid: number | null };
    return { version: Number(row.version), ids: row.ids.map(Number), outboxIds: row.outbox_ids.map(Number), txid: row.txid === null ? null : Number(row.txid) };
  },

  /** The realm's read-model version now (migrations/0003), for a write that runs in an explicit transaction. */
  async readModelVersion(q: Queryable, realmId: number): Promise<number> {
    const { rows } = await q.query<{ version: number }>('SELECT version FROM messages.read_model_version WHERE realm_id = $1', [realmId]);
    return rows[0]?.version ?? 0;
  },

  /** Every recipient's row in one statement (one array per column). */
  async insertUserMessages(q: Queryable, userIds: readonly number[], messageIds: readonly number[], flags: readonly number[]): Promise<void> {
    if (userIds.length === 0) return;
    await q.query(
      `INSERT INTO messages.user_message (user_id, message_id, flags)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::int[]) ON CONFLICT DO NOTHING`,
      [userIds, messageIds, flags],
    );
  },

  async byIds(q: Queryable, ids: readonly number[]): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await q.query<MessageRow>(`SELECT ${MESSAGE_COLS}, edit_history, last_edit_time FROM messages.message WHERE id = ANY($1::bigint[]) ORDER BY id`, [ids]);
    return rows;
  },

  async userFlags(q: Queryable, userId: number, messageIds: readonly number[]): Promise<Map<number, number>> {
    if (messageIds.length === 0) return new Map();
    const { rows } = await q.query<UserMessageRow>(
      'SELECT user_id, message_id, flags FROM messages.user_message WHERE user_id = $1 AND message_id = ANY($2::bigint[])',
      [userId, messageIds],
    );
    return new Map(rows.map((r) => [r.message_id, r.flags]));
  },

  /**
   * Active users (per the directory copy) other than `exceptUserId` whose row of the message
   * is read, by id, leaving out users `viewerId` has muted or who have muted `viewerId`.
   */
  async activeReaderIds(q: Queryable, realmId: number, messageId: number, exceptUserId: number, viewerId: number): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>(
      `SELECT um.user_id FROM messages.user_message um JOIN messages.user_account u ON u.realm_id = $1 AND u.id = um.user_id
       WHERE um.message_id = $2 AND (um.flags & 1) <> 0 AND um.user_id <> $3 AND u.is_active
         AND NOT EXISTS (SELECT 1 FROM messages.muted_user mu WHERE mu.muted
           AND ((mu.user_id = $4 AND mu.muted_user_id = um.user_id) OR (mu.user_id = um.user_id AND mu.muted_user_id = $4)))
       ORDER BY um.user_id`,
      [realmId, messageId, exceptUserId, viewerId],
    );
    return rows.map((r) => Number(r.user_id));
  },

  /** Sets (or clears) `bit` on the user's rows among `messageIds`; returns the ids that changed. */
  async changeFlag(q: Queryable, userId: number, messageIds: readonly number[], bit: number, set: boolean): Promise<number[]> {
    const { rows } = await q.query<{ message_id: number }>(
      set
        ? `UPDATE messages.user_message SET flags = flags | $3 WHERE user_id = $1 AND message_id = ANY($2::bigint[]) AND (flags & $3) = 0 RETURNING message_id`
        : `UPDATE messages.user_message SET flags = flags & ~$3 WHERE user_id = $1 AND message_id = ANY($2::bigint[]) AND (flags & $3) <> 0 RETURNING message_id`,
      [userId, messageIds, bit],
    );
    return rows.map((r) => r.message_id).sort((a, b) => a - b);
  },

  /**
   * Marks read up to `limit` of the user's unread messages, newest first, optionally only
   * in one recipient (stream) and topic; returns the ids marked.
   */
  async markUnreadAsRead(q: Queryable, userId: number, opts: { limit: number; recipientId?: number; topic?: string }): Promise<number[]> {
    // Without a stream the partial unread index alone finds the rows; the join is only paid when filtering.
    const sql =
      opts.recipientId === undefined
        ? `UPDATE messages.user_message um SET flags = um.flags | 1
           WHERE um.user_id = $1 AND um.message_id IN (
             SELECT u.message_id FROM messages.user_message u WHERE u.user_id = $1 AND (u.flags & 1) = 0
             ORDER BY u.message_id DESC LIMIT $2)
           RETURNING um.message_id`
        : `UPDATE messages.user_message um SET flags = um.flags | 1
           WHERE um.user_id = $1 AND um.message_id IN (
             SELECT u.message_id FROM messages.user_message u JOIN messages.message m ON m.id = u.message_id
             WHERE u.user_id = $1 AND (u.flags & 1) = 0 AND m.recipient_id = $3 AND ($4::text IS NULL OR lower(m.topic) = lower($4))
             ORDER BY u.message_id DESC LIMIT $2)
           RETURNING um.message_id`;
    const params = opts.recipientId === undefined ? [userId, opts.limit] : [userId, opts.limit, opts.recipientId, opts.topic ?? null];
    const { rows } = await q.query<{ message_id: number }>(sql, params);
    return rows.map((r) => r.message_id).sort((a, b) => a - b);
  },

  /** Marks every unread message `senderId` sent to `userId` as read (muting the sender). */
  async markSenderAsRead(q: Queryable, userId: number, senderId: number): Promise<number[]> {
    const { rows } = await q.query<{ message_id: number }>(
      `UPDATE messages.user_message um SET flags = um.flags | 1 FROM messages.message m
       WHERE um.user_id = $1 AND (um.flags & 1) = 0 AND m.id = um.message_id AND m.sender_id = $2
       RETURNING um.message_id`,
      [userId, senderId],
    );
    return rows.map((r) => Number(r.message_id)).sort((a, b) => a - b);
  },

  async hasRowsInTopic(q: Queryable, userId: number, recipientId: number, topic: string): Promise<boolean> {
    const { rowCount } = await q.query(
      `SELECT 1 FROM messages.message m JOIN messages.user_message um ON um.message_id = m.id AND um.user_id = $1
       WHERE m.recipient_id = $2 AND lower(m.topic) = lower($3) LIMIT 1`,
      [userId, recipientId, topic],
    );
    return (rowCount ?? 0) > 0;
  },

  /** Users who sent in a topic (topic wildcard mentions reach only them). */
  async topicParticipants(q: Queryable, recipientId: number, topic: string): Promise<number[]> {
    const { rows } = await q.query<{ sender_id: number }>(
      'SELECT DISTINCT sender_id FROM messages.message WHERE recipient_id = $1 AND lower(topic) = lower($2)',
      [recipientId, topic],
    );
    return rows.map((r) => r.sender_id);
  },

  /** The newest message id of any realm (0 when there is none). */
  async maxMessageId(q: Queryable): Promise<number> {
    const { rows } = await q.query<{ id: number }>('SELECT COALESCE(max(id), 0) AS id FROM messages.message');
    return rows[0]?.id ?? 0;
  },

  async maxMessageIdFor(q: Queryable, userId: number): Promise<number> {
    const { rows } = await q.query<{ id: number | null }>('SELECT max(message_id) AS id FROM messages.user_message WHERE user_id = $1', [userId]);
    return rows[0]?.id ?? -1;
  },

  async findIdempotent(q: Queryable, userId: number, key: string): Promise<number | undefined> {
    const { rows } = await q.query<{ message_id: number }>('SELECT message_id FROM messages.idempotency_key WHERE user_id = $1 AND key = $2', [userId, key]);
    return rows[0]?.message_id;
  },
  /**
   * Claims keys for messages; returns, for each key that was new, the message id that won it
   * (`user_id NUL key` → id). A key repeated within the call is claimed by its first row only,
   * so the caller must compare the winner with its own id, not just look the key up.
   */
  async claimIdempotencyKeys(q: Queryable, userIds: readonly number[], keys: readonly string[], messageIds: readonly number[]): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const { rows } = await q.query<{ user_id: number; key: string; message_id: number }>(
      `INSERT INTO messages.idempotency_key (user_id, key, message_id)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[]) ON CONFLICT DO NOTHING RETURNING user_id, key, message_id`,
      [userIds, keys, messageIds],
    );
    return new Map(rows.map((r) => [`${r.user_id}\u0000${r.key}`, Number(r.message_id)]));
  },
};

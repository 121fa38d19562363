/** SQL for the statistics kept from message.sent events: first message and daily traffic per stream. */
import { sqlArray, type Queryable } from '@zc/shared/db';

export interface StreamStats {
  first_message_id: number | null;
  /** Messages sent in the last 28 days. */
  recent_messages: number;
}

export const TRAFFIC_WINDOW_DAYS = 28;

/** A stream's first_message_id changed to this value (null: no message left). */
export interface FirstMessageChange {
  stream_id: number;
  first_message_id: number | null;
}

export const streamStatsStore = {
  /** Counts one message (see recordMessages). */
  async recordMessage(q: Queryable, realmId: number, streamId: number, messageId: number, day: string): Promise<void> {
    await this.recordMessages(q, [{ realmId, streamId, messageId, day }]);
  },
  /**
   * Counts a batch of messages (several streams, realms and days) in one statement: under
   * load one round trip and one commit serve every message.sent event waiting, instead of
   * one each; streams this service does not know are left alone. A message counted before
   * (a redelivered event) is not counted again; the first message id only ever decreases
   * here, so a replay cannot move it either.
   */
  async recordMessages(q: Queryable, sent: ReadonlyArray<{ realmId: number; streamId: number; messageId: number; day: string }>): Promise<void> {
    if (sent.length === 0) return;
    await q.query(
      `WITH input AS (
         SELECT DISTINCT ON (i.message_id) i.stream_id, i.message_id, i.day
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::date[]) AS i(realm_id, stream_id, message_id, day)
         JOIN subscriptions.stream s ON s.id = i.stream_id AND s.realm_id = i.realm_id
       ),
       -- Messages not counted before: a redelivered event finds its message here already.
       fresh AS (
         INSERT INTO subscriptions.counted_message (message_id, day) SELECT message_id, day FROM input
         ON CONFLICT (message_id) DO NOTHING RETURNING message_id
       ),
       known AS (SELECT input.* FROM input JOIN fresh USING (message_id)),
       first AS (
         INSERT INTO subscriptions.stream_stats (stream_id, first_message_id)
         SELECT stream_id, min(message_id) FROM input GROUP BY stream_id
         ON CONFLICT (stream_id) DO UPDATE SET first_message_id = LEAST(stream_stats.first_message_id, EXCLUDED.first_message_id)
       )
       INSERT INTO subscriptions.stream_daily_traffic (stream_id, day, message_count)
       SELECT stream_id, day, count(*) FROM known GROUP BY stream_id, day
       ON CONFLICT (stream_id, day) DO UPDATE SET message_count = stream_daily_traffic.message_count + EXCLUDED.message_count`,
      [sqlArray(sent.map((m) => m.realmId)), sqlArray(sent.map((m) => m.streamId)), sqlArray(sent.map((m) => m.messageId)), sent.map((m) => m.day)],
    );
  },
  /**
   * Messages moved between streams: the destination's first message is at most the oldest
   * moved one; the source's becomes what the messages service found left (null: none).
   * Answers the streams whose first_message_id changed, with the new value.
   */
  async recordMove(
    q: Queryable,
    realmId: number,
    m: { from_stream_id: number; to_stream_id: number; moved_first_message_id: number; from_first_message_id: number | null },
  ): Promise<FirstMessageChange[]> {
    const to = await q.query<{ first_message_id: number }>(
      `WITH known AS (SELECT id FROM subscriptions.stream WHERE realm_id = $1 AND id = $2)
       INSERT INTO subscriptions.stream_stats (stream_id, first_message_id) SELECT id, $3 FROM known
       ON CONFLICT (stream_id) DO UPDATE SET first_message_id = LEAST(stream_stats.first_message_id, EXCLUDED.first_message_id)
         WHERE stream_stats.first_message_id IS DISTINCT FROM LEAST(stream_stats.first_message_id, EXCLUDED.first_message_id)
       RETURNING first_message_id`,
      [realmId, m.to_stream_id, m.moved_first_message_id],
    );
    const changes: FirstMessageChange[] = to.rows.map((r) => ({ stream_id: m.to_stream_id, first_message_id: r.first_message_id }));
    if (await this.setFirstMessageId(q, m.from_stream_id, m.from_first_message_id)) changes.push({ stream_id: m.from_stream_id, first_message_id: m.from_first_message_id });
    return changes;
  },
  /**
   * Messages deleted from a stream: when its first message is among them, the first is now
   * `firstLeft` (the oldest message left, null: none). True when it changed; a redelivered
   * event finds it changed already.
   */
  async recordDeletion(q: Queryable, streamId: number, deletedIds: readonly number[], firstLeft: number | null): Promise<boolean> {
    const { rowCount } =
      firstLeft === null
        ? await q.query('DELETE FROM subscriptions.stream_stats WHERE stream_id = $1 AND first_message_id = ANY($2::bigint[])', [streamId, deletedIds])
        : await q.query('UPDATE subscriptions.stream_stats SET first_message_id = $3 WHERE stream_id = $1 AND first_message_id = ANY($2::bigint[])', [streamId, deletedIds, firstLeft]);
    return (rowCount ?? 0) > 0;
  },
  /** Sets a stream's first message (null: none, the row goes); true when that changed it. */
  async setFirstMessageId(q: Queryable, streamId: number, first: number | null): Promise<boolean> {
    const { rowCount } =
      first === null
        ? await q.query('DELETE FROM subscriptions.stream_stats WHERE stream_id = $1 AND first_message_id IS NOT NULL', [streamId])
        : await q.query('UPDATE subscriptions.stream_stats SET first_message_id = $2 WHERE stream_id = $1 AND first_message_id IS DISTINCT FROM $2', [streamId, first]);
    return (rowCount ?? 0) > 0;
  },
  async statsFor(q: Queryable, streamIds: readonly number[], today: string): Promise<Map<number, StreamStats>> {
    const out = new Map<number, StreamStats>(streamIds.map((id) => [id, { first_message_id: null, recent_messages: 0 }]));
    if (streamIds.length === 0) return out;
    const { rows } = await q.query<{ stream_id: number; first_message_id: number | null; recent: number }>(
      `SELECT s.id AS stream_id, st.first_message_id,
         (SELECT coalesce(sum(message_count), 0)::int FROM subscriptions.stream_daily_traffic t
            WHERE t.stream_id = s.id AND t.day > $2::date - $3::int) AS recent
       FROM unnest($1::bigint[]) AS s(id) LEFT JOIN subscriptions.stream_stats st ON st.stream_id = s.id`,
      [streamIds, today, TRAFFIC_WINDOW_DAYS],
    );
    for (const r of rows) out.set(r.stream_id, { first_message_id: r.first_message_id, recent_messages: r.recent });
    return out;
  },
  /** Drops daily counts that fell out of the window. */
  async pruneBefore(q: Queryable, day: string): Promise<void> {
    await q.query('DELETE FROM subscriptions.stream_daily_traffic WHERE day < $1::date', [day]);
    await q.query('DELETE FROM subscriptions.counted_message WHERE day < $1::date', [day]);
  },
};

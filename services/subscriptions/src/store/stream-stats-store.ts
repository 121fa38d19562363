/** SQL for the statistics kept from message.sent events: first message and daily traffic per stream. */
import type { Queryable } from '@zc/shared/db';

export interface StreamStats {
  first_message_id: number | null;
  /** Messages sent in the last 28 days. */
  recent_messages: number;
}

export const TRAFFIC_WINDOW_DAYS = 28;

export const streamStatsStore = {
  /** Counts one message; the first message id only ever decreases, so a replay cannot move it. */
  /**
   * Counts one message of a stream of `realmId`, in one statement (it runs once per message
   * sent, so round trips matter); a stream this service does not know is left alone.
   */
  async recordMessage(q: Queryable, realmId: number, streamId: number, messageId: number, day: string): Promise<void> {
    await q.query(
      `WITH known AS (SELECT id FROM subscriptions.stream WHERE realm_id = $1 AND id = $2),
       first AS (
         INSERT INTO subscriptions.stream_stats (stream_id, first_message_id) SELECT id, $3 FROM known
         ON CONFLICT (stream_id) DO UPDATE SET first_message_id = LEAST(stream_stats.first_message_id, EXCLUDED.first_message_id)
       )
       INSERT INTO subscriptions.stream_daily_traffic (stream_id, day, message_count) SELECT id, $4, 1 FROM known
       ON CONFLICT (stream_id, day) DO UPDATE SET message_count = stream_daily_traffic.message_count + 1`,
      [realmId, streamId, messageId, day],
    );
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
  },
};

/**
 * A fast, deterministic seeder for the messages service's schema: N messages (default
 * 1,000,000) over S public streams × T topics, with one per-user row for every subscriber
 * of every message, straight into the tables (benchmarks only: no events, no API).
 *
 * Speed: the rows are generated inside PostgreSQL (INSERT … SELECT over generate_series)
 * rather than streamed from Node with COPY: nothing crosses the socket, and the work is one
 * statement per table. Secondary indexes are dropped first and rebuilt after, which is far
 * cheaper than maintaining them row by row. Determinism: every column is a pure function of
 * the message number (multiplicative hashing into a fixed vocabulary), so two seeds with the
 * same options produce the same rows.
 *
 * The streams exist only in the messages service's read model (ids from `firstStreamId`, far
 * above what the subscriptions service hands out); the users must already be known to it.
 */
import { createPool, type Pool } from '@zc/shared/db';

export interface SeedOptions {
  databaseUrl: string;
  realmId: number;
  /** Users to spread over the streams as subscribers and senders (at least subscribersPerStream). */
  userIds: number[];
  /** Users subscribed to every stream (e.g. the benchmark's reader), on top of the spread. */
  everywhere?: number[];
  messages?: number;
  streams?: number;
  topicsPerStream?: number;
  subscribersPerStream?: number;
  /** The newest this many messages are unread for their receivers; older ones are read. */
  unreadTail?: number;
  firstStreamId?: number;
  streamPrefix?: string;
}

export interface SeededStream {
  stream_id: number;
  name: string;
  recipient_id: number;
  subscriber_ids: number[];
}

export interface SeedResult {
  streams: SeededStream[];
  /**
   * Topic names; message k (stream k % S) is in topic `topics[(floor(k / S) * 7919) % T]`, so
   * every stream has every topic, each with about N / (S × T) messages. (Numbering topics by k
   * itself gave each stream only T / 10 of them: history scenarios then mostly read empty topics.)
   */
  topics: string[];
  firstMessageId: number;
  lastMessageId: number;
  userMessageRows: number;
  /** A word in about 0.1 % of messages, and one in about 1 %, for keyword-search scenarios. */
  rareWord: string;
  commonWord: string;
  elapsedMs: number;
}

/** 1,000 distinct lower-case words, the same on every run. */
export function vocabulary(size = 1000): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'to', 'sha', 'vel', 'dor', 'ni', 'pra', 'qu', 'bel', 'zo', 'tur', 'fen', 'gal'];
  const words: string[] = [];
  for (let i = 0; words.length < size; i++) {
    let n = i + 17;
    let w = '';
    do {
      w += syllables[n % syllables.length];
      n = Math.floor(n / syllables.length);
    } while (n > 0);
    words.push(`${w}${i % 7 === 0 ? 'x' : ''}`);
  }
  return words;
}

async function withoutSecondaryIndexes<T>(pool: Pool, tables: string[], fn: () => Promise<T>): Promise<T> {
  const { rows } = await pool.query<{ indexname: string; indexdef: string }>(
    `SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = 'messages' AND i.tablename = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const r of rows) await pool.query(`DROP INDEX messages."${r.indexname}"`);
  try {
    return await fn();
  } finally {
    for (const r of rows) await pool.query(r.indexdef);
  }
}

export async function seedMessages(o: SeedOptions): Promise<SeedResult> {
  const started = Date.now();
  const n = o.messages ?? 1_000_000;
  const streamCount = o.streams ?? 20;
  const topicCount = o.topicsPerStream ?? 50;
  const subsPer = Math.min(o.subscribersPerStream ?? 10, o.userIds.length);
  const unreadTail = o.unreadTail ?? 2000;
  const firstStreamId = o.firstStreamId ?? 1_000_000;
  const prefix = o.streamPrefix ?? 'bench';
  const words = vocabulary();
  const topics = Array.from({ length: topicCount }, (_, i) => `topic ${i} ${words[(i * 31) % words.length]}`);
  const pool = createPool(o.databaseUrl, { max: 2, applicationName: 'zc-seed-messages' });
  try {
    const streams: SeededStream[] = [];
    for (let s = 0; s < streamCount; s++) {
      const subscribers = [...new Set([...Array.from({ length: subsPer }, (_, j) => o.userIds[(s * 7 + j) % o.userIds.length] as number), ...(o.everywhere ?? [])])];
      const stream_id = firstStreamId + s;
      const { rows } = await pool.query<{ id: number }>(
        `INSERT INTO messages.recipient (realm_id, type, type_id) VALUES ($1, 2, $2)
         ON CONFLICT (type, type_id) WHERE type_id IS NOT NULL DO UPDATE SET realm_id = EXCLUDED.realm_id RETURNING id`,
        [o.realmId, stream_id],
      );
      const recipient_id = (rows[0] as { id: number }).id;
      const name = `${prefix}-${s}`;
      await pool.query(
        `INSERT INTO messages.stream (id, realm_id, name, invite_only, is_web_public, history_public_to_subscribers, stream_post_policy, recipient_id)
         VALUES ($1, $2, $3, false, false, true, 1, $4) ON CONFLICT (id) DO NOTHING`,
        [stream_id, o.realmId, name, recipient_id],
      );
      await pool.query('INSERT INTO messages.subscriber (stream_id, user_id) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [stream_id, subscribers]);
      streams.push({ stream_id, name, recipient_id, subscriber_ids: subscribers });
    }

    // Rows written behind the read-model store's back: bump the realm's read-model version as
    // its writes do, so that no send context cached before the seed is taken for current.
    await pool.query(
      `INSERT INTO messages.read_model_version AS v (realm_id, version) VALUES ($1, 1)
       ON CONFLICT (realm_id) DO UPDATE SET version = v.version + 1`,
      [o.realmId],
    );

    const rareWord = 'quokkabench';
    const commonWord = 'wombatbench';
    if (n === 0) return { streams, topics, firstMessageId: 0, lastMessageId: 0, userMessageRows: 0, rareWord, commonWord, elapsedMs: Date.now() - started };
    const { rows: seq } = await pool.query<{ v: number }>("SELECT nextval('messages.message_id_seq') AS v");
    const first = (seq[0] as { v: number }).v;
    const last = first + n - 1;
    await pool.query("SELECT setval('messages.message_id_seq', $1)", [last]);

    let userMessageRows = 0;
    await withoutSecondaryIndexes(pool, ['message', 'user_message'], async () => {
      // k = 0..n-1; stream = k % S; content = 6 vocabulary words, plus the rare word in
      // every 1000th message and the common one in every 100th.
      await pool.query(
        `WITH s AS (SELECT ord - 1 AS i, id, rid, subs FROM unnest($3::bigint[], $4::bigint[], $5::text[]) WITH ORDINALITY AS x(id, rid, subs, ord))
         INSERT INTO messages.message (id, realm_id, sender_id, recipient_id, stream_id, topic, content, rendered_content, rendered_content_version,
           date_sent, sending_client, is_me_message, has_link, has_image, has_attachment)
         SELECT $1::bigint + k, $2, (string_to_array(s.subs, ',')::bigint[])[(1 + (k / $6) % array_length(string_to_array(s.subs, ','), 1))::int],
           s.rid, s.id, ($7::text[])[(1 + ((k / $6) * 7919) % $8)::int], c.body, '<p>' || c.body || '</p>', 1,
           now() - make_interval(secs => ($9::bigint - k) * 30), 'seed', false, k % 50 = 0, false, false
         FROM generate_series(0, $9::bigint - 1) AS k
         JOIN s ON s.i = k % $6
         CROSS JOIN LATERAL (SELECT
           ($10::text[])[(1 + (k * 2654435761) % 1000)::int] || ' ' || ($10::text[])[(1 + (k * 40503 + 7) % 1000)::int] || ' ' ||
           ($10::text[])[(1 + (k * 9973 + 11) % 1000)::int] || ' ' || ($10::text[])[(1 + (k * 31337 + 13) % 1000)::int] || ' ' ||
           ($10::text[])[(1 + (k * 65537 + 17) % 1000)::int] || ' ' || ($10::text[])[(1 + (k * 104729 + 19) % 1000)::int] ||
           CASE WHEN k % 1000 = 3 THEN ' ${rareWord}' ELSE '' END ||
           CASE WHEN k % 100 = 5 THEN ' ${commonWord}' ELSE '' END ||
           CASE WHEN k % 50 = 0 THEN ' https://example.com/' || k ELSE '' END AS body) c`,
        [
          first,
          o.realmId,
          streams.map((s) => s.stream_id),
          streams.map((s) => s.recipient_id),
          streams.map((s) => s.subscriber_ids.join(',')),
          streamCount,
          topics,
          topicCount,
          n,
          words,
        ],
      );
      // One row per subscriber; the sender's own row is read, others are read except the newest tail.
      const um = await pool.query(
        `INSERT INTO messages.user_message (user_id, message_id, flags)
         SELECT sub.user_id, m.id,
           CASE WHEN sub.user_id = m.sender_id OR m.id <= $2::bigint - $3::bigint THEN 1 ELSE 0 END | CASE WHEN m.id % 997 = 0 THEN 2 ELSE 0 END
         FROM messages.message m JOIN messages.subscriber sub ON sub.stream_id = m.stream_id
         WHERE m.id BETWEEN $1::bigint AND $2::bigint`,
        [first, last, unreadTail],
      );
      userMessageRows = um.rowCount ?? 0;
    });
    // VACUUM sets the visibility map, so index-only scans skip the heap as they would on a settled database.
    await pool.query('VACUUM ANALYZE messages.message');
    await pool.query('VACUUM ANALYZE messages.user_message');
    // Writes the seed out now rather than while a scenario measures (needs a superuser; the
    // bench's local database has one, elsewhere the checkpointer does it in its own time).
    await pool.query('CHECKPOINT').catch(() => undefined);
    return { streams, topics, firstMessageId: first, lastMessageId: last, userMessageRows, rareWord, commonWord, elapsedMs: Date.now() - started };
  } finally {
    await pool.end();
  }
}

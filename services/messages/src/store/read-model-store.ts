/**
 * The read models this service keeps of other services' data besides its copy of the
 * directory of realms and users (@zc/shared/directory): streams, subscribers, muted streams
 * and topics (subscriptions service), and the recipients derived from them. Upserts are
 * idempotent so redelivered events do no harm.
 */
import { Role, type StreamRecord } from '@zc/shared/contracts';
import { DIRECTORY_REALM_COLUMNS, DIRECTORY_USER_COLUMNS, directoryStore, type DirectoryRealm, type DirectoryUser } from '@zc/shared/directory';
import type { Queryable } from '@zc/shared/db';

/** The realm and user rows of this service's copy of the directory (@zc/shared/directory). */
export type RealmRow = DirectoryRealm;
export type UserRow = DirectoryUser;
/** A sender as a send reads it: with the users who muted them (their copies arrive read). */
export type SenderRow = UserRow & { muted_by: number[] };

/** The directory tables' SQL in this schema, for queries that take a Queryable (no deps). */
export const directoryRows = directoryStore('messages');

export interface StreamRow {
  id: number;
  realm_id: number;
  name: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  stream_post_policy: number;
  is_archived: boolean;
  recipient_id: number;
  /** The owner's revision of the row (StreamRecord.revision). */
  revision: number;
}

export const RECIPIENT_PERSONAL = 1;
export const RECIPIENT_STREAM = 2;
export const RECIPIENT_HUDDLE = 3;

export interface RecipientRow {
  id: number;
  type: number;
  type_id: number | null;
  user_ids: number[];
}

const STREAM_COLS = 'id, realm_id, name, invite_only, is_web_public, history_public_to_subscribers, stream_post_policy, is_archived, recipient_id, revision';

/** What a send needs from the read models, read in one round trip (see `sendContext`). */
export interface SendContextRow {
  realm: RealmRow | null;
  sender: SenderRow | null;
  stream: StreamRow | null;
  subscriber_ids: number[];
  /** Whether a guest is among the subscribers (their access ends with their subscription). */
  guest_subscribed: boolean;
  /** The realm's read-model version these rows belong to (migrations/0003). */
  version: number;
}

/**
 * A CTE named `bump` that increments the read-model version of the realms `realmsSql` selects
 * (one column), in realm order. Statements that change the read models select from it
 * (`AFTER_BUMP`) so that it runs before they lock or write any other row: every writer takes
 * the realm's version row first, so writers queue on it instead of deadlocking on each other's
 * rows, and the bump commits together with the change it announces.
 */
const bump = (realmsSql: string) => `bump AS (
  INSERT INTO messages.read_model_version AS v (realm_id, version)
  SELECT r, 1 FROM (${realmsSql}) AS x(r) WHERE r IS NOT NULL GROUP BY r ORDER BY r
  ON CONFLICT (realm_id) DO UPDATE SET version = v.version + 1
  RETURNING realm_id)`;
/** A condition that is always true but can only be evaluated after `bump` ran (a one-time filter). */
const AFTER_BUMP = '(SELECT count(*) FROM bump) >= 0';
const MUTED_BY_SENDER = 'ARRAY(SELECT mu.user_id::int FROM messages.muted_user mu WHERE mu.muted_user_id = $2 AND mu.muted)';
const realmOfStream = (param: string) => `SELECT realm_id FROM messages.stream WHERE id = ${param}`;

export const readModelStore = {
  /**
   * The realm, the sender and (for a stream message) the stream with its subscribers, in one
   * query: the hot path of every send. Missing parts are null; callers fall back to the
   * slower paths that ask the owning services.
   */
  async sendContext(q: Queryable, realmId: number, senderId: number, stream: { stream_id: number } | { name: string } | null): Promise<SendContextRow> {
    const byId = stream && 'stream_id' in stream ? stream.stream_id : null;
    const byName = stream && 'name' in stream ? stream.name : null;
    const { rows } = await q.query<SendContextRow>(
      `WITH s AS (
         SELECT ${STREAM_COLS} FROM messages.stream
         WHERE realm_id = $1 AND (id = $3 OR ($3 IS NULL AND lower(name) = lower($4) AND NOT is_archived)) LIMIT 1)
       SELECT
         (SELECT row_to_json(r) FROM (SELECT ${DIRECTORY_REALM_COLUMNS} FROM messages.realm WHERE id = $1) r) AS realm,
         (SELECT row_to_json(u) FROM (SELECT ${DIRECTORY_USER_COLUMNS}, ${MUTED_BY_SENDER} AS muted_by
                                       FROM messages.user_account WHERE realm_id = $1 AND id = $2) u) AS sender,
         (SELECT row_to_json(s) FROM s) AS stream,
         ARRAY(SELECT sub.user_id::int FROM messages.subscriber sub JOIN s ON sub.stream_id = s.id) AS subscriber_ids,
         EXISTS (SELECT 1 FROM messages.subscriber sub JOIN s ON sub.stream_id = s.id
                 JOIN messages.user_account u ON u.id = sub.user_id WHERE u.role >= $5) AS guest_subscribed,
         COALESCE((SELECT version FROM messages.read_model_version WHERE realm_id = $1), 0) AS version`,
      [realmId, senderId, byId, byName, Role.GUEST],
    );
    const row = rows[0] as SendContextRow;
    if (row.sender) row.sender.date_joined = new Date(row.sender.date_joined);
    return row;
  },

  /**
   * Bumps the read-model version of these realms (sorted): the directory's writes run this
   * first in their transaction (its beforeWrite hook), as the statements below do with `bump`.
   */
  async bumpVersions(q: Queryable, realmIds: readonly number[]): Promise<void> {
    await q.query(
      `INSERT INTO messages.read_model_version AS v (realm_id, version)
       SELECT r, 1 FROM unnest($1::bigint[]) AS r ORDER BY r
       ON CONFLICT (realm_id) DO UPDATE SET version = v.version + 1`,
      [realmIds],
    );
  },

  /**
   * Inserts or updates a stream; creates its recipient the first time. The consumer and a
   * send that just asked the owner may insert the same new stream at once (issue 16).
   */
  async upsertStream(q: Queryable, s: StreamRecord): Promise<StreamRow> {
    const { rows } = await q.query<StreamRow>(
      `WITH ${bump('SELECT $2::bigint')},
       existing AS (SELECT recipient_id FROM messages.stream WHERE id = $1 AND ${AFTER_BUMP}),
       new_recipient AS (
         INSERT INTO messages.recipient (realm_id, type, type_id)
         SELECT $2, 2, $1 WHERE NOT EXISTS (SELECT 1 FROM existing) AND ${AFTER_BUMP}
         -- DO UPDATE (a no-op) rather than DO NOTHING: it returns the row another writer
         -- committed after this statement's snapshot, which no SELECT here could see.
         ON CONFLICT (type, type_id) WHERE type_id IS NOT NULL DO UPDATE SET type_id = EXCLUDED.type_id
         RETURNING id)
       INSERT INTO messages.stream (id, realm_id, name, invite_only, is_web_public, history_public_to_subscribers, stream_post_policy, is_archived, revision, recipient_id)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9::bigint, 0),
         COALESCE((SELECT recipient_id FROM existing), (SELECT id FROM new_recipient),
                  (SELECT id FROM messages.recipient WHERE type = 2 AND type_id = $1))
       WHERE ${AFTER_BUMP}
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, invite_only = EXCLUDED.invite_only, is_web_public = EXCLUDED.is_web_public,
         history_public_to_subscribers = EXCLUDED.history_public_to_subscribers, stream_post_policy = EXCLUDED.stream_post_policy,
         is_archived = EXCLUDED.is_archived, revision = COALESCE($9::bigint, stream.revision)
         -- A record older than the stored one (a late event after a synchronous update) changes nothing;
         -- a record without a revision (written before revisions existed) always applies.
         WHERE $9::bigint IS NULL OR stream.revision <= $9::bigint
       RETURNING ${STREAM_COLS}`,
      [s.stream_id, s.realm_id, s.name, s.invite_only, s.is_web_public, s.history_public_to_subscribers, s.stream_post_policy, s.is_archived, s.revision ?? null],
    );
    if (rows[0]) return rows[0];
    // Skipped as older: the stored row stands.
    return (await this.streamById(q, s.realm_id, s.stream_id)) as StreamRow;
  },
  async streamById(q: Queryable, realmId: number, streamId: number): Promise<StreamRow | undefined> {
    const { rows } = await q.query<StreamRow>(`SELECT ${STREAM_COLS} FROM messages.stream WHERE realm_id = $1 AND id = $2`, [realmId, streamId]);
    return rows[0];
  },
  async streamByName(q: Queryable, realmId: number, name: string): Promise<StreamRow | undefined> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${STREAM_COLS} FROM messages.stream WHERE realm_id = $1 AND lower(name) = lower($2) AND NOT is_archived`,
      [realmId, name],
    );
    return rows[0];
  },
  async streamsByRecipientIds(q: Queryable, recipientIds: readonly number[]): Promise<StreamRow[]> {
    if (recipientIds.length === 0) return [];
    const { rows } = await q.query<StreamRow>(`SELECT ${STREAM_COLS} FROM messages.stream WHERE recipient_id = ANY($1::bigint[])`, [recipientIds]);
    return rows;
  },
  async streamsByIds(q: Queryable, ids: readonly number[]): Promise<StreamRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await q.query<StreamRow>(`SELECT ${STREAM_COLS} FROM messages.stream WHERE id = ANY($1::bigint[])`, [ids]);
    return rows;
  },
  /** Recipients of public streams of a realm (streams:public). */
  async publicStreamRecipients(q: Queryable, realmId: number): Promise<number[]> {
    const { rows } = await q.query<{ recipient_id: number }>('SELECT recipient_id FROM messages.stream WHERE realm_id = $1 AND NOT invite_only', [realmId]);
    return rows.map((r) => r.recipient_id);
  },
  /**
   * Recipients of the realm's streams the user may not read now: private streams they are
   * not subscribed to, and for guests every stream they are not subscribed to. Queries over
   * per-user rows exclude these (CVE-2024-27286).
   */
  async inaccessibleStreamRecipients(q: Queryable, realmId: number, userId: number, isGuest: boolean): Promise<number[]> {
    const { rows } = await q.query<{ recipient_id: number }>(
      `SELECT s.recipient_id FROM messages.stream s
       WHERE s.realm_id = $1 AND (s.invite_only OR $3::boolean)
         AND NOT EXISTS (SELECT 1 FROM messages.subscriber sub WHERE sub.stream_id = s.id AND sub.user_id = $2)`,
      [realmId, userId, isGuest],
    );
    return rows.map((r) => r.recipient_id);
  },

  async addSubscribers(q: Queryable, streamId: number, userIds: readonly number[]): Promise<void> {
    if (userIds.length === 0) return;
    await q.query(
      `WITH ${bump(realmOfStream('$1'))}
       INSERT INTO messages.subscriber (stream_id, user_id) SELECT $1, u FROM unnest($2::bigint[]) AS u WHERE ${AFTER_BUMP} ON CONFLICT DO NOTHING`,
      [streamId, userIds],
    );
  },
  async removeSubscribers(q: Queryable, streamId: number, userIds: readonly number[]): Promise<void> {
    await q.query(
      `WITH ${bump(realmOfStream('$1'))}
       DELETE FROM messages.subscriber WHERE stream_id = $1 AND user_id = ANY($2::bigint[]) AND ${AFTER_BUMP}`,
      [streamId, userIds],
    );
  },
  /** Makes the subscriber set exactly `userIds` (an authoritative answer from the owner). */
  async replaceSubscribers(q: Queryable, streamId: number, userIds: readonly number[]): Promise<void> {
    await q.query(
      `WITH ${bump(realmOfStream('$1'))}
       DELETE FROM messages.subscriber WHERE stream_id = $1 AND NOT (user_id = ANY($2::bigint[])) AND ${AFTER_BUMP}`,
      [streamId, userIds],
    );
    await this.addSubscribers(q, streamId, userIds);
  },
  async subscriberIds(q: Queryable, streamId: number): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>('SELECT user_id FROM messages.subscriber WHERE stream_id = $1', [streamId]);
    return rows.map((r) => r.user_id);
  },
  async isSubscribed(q: Queryable, streamId: number, userId: number): Promise<boolean> {
    const { rowCount } = await q.query('SELECT 1 FROM messages.subscriber WHERE stream_id = $1 AND user_id = $2', [streamId, userId]);
    return (rowCount ?? 0) > 0;
  },
  /** Who muted `senderId` (for a send whose sender the read model did not know). */
  async mutersOf(q: Queryable, senderId: number): Promise<number[]> {
    const { rows } = await q.query<{ user_id: number }>('SELECT user_id::int AS user_id FROM messages.muted_user WHERE muted_user_id = $1 AND muted', [senderId]);
    return rows.map((r) => r.user_id);
  },
  /**
   * Stores a mute change unless a newer one of the pair is stored; true when it was stored.
   * Bumps the realm's version: a send checked against the old list is checked again.
   */
  async applyMutedUser(q: Queryable, c: { realm_id: number; user_id: number; muted_user_id: number; muted: boolean; revision: number }): Promise<boolean> {
    const { rowCount } = await q.query(
      `WITH ${bump('SELECT $3::bigint')}
       INSERT INTO messages.muted_user AS mu (user_id, muted_user_id, realm_id, muted, revision)
       SELECT $1, $2, $3, $4, $5 WHERE ${AFTER_BUMP}
       ON CONFLICT (user_id, muted_user_id) DO UPDATE SET muted = EXCLUDED.muted, revision = EXCLUDED.revision
         WHERE mu.revision < EXCLUDED.revision`,
      [c.user_id, c.muted_user_id, c.realm_id, c.muted, c.revision],
    );
    return rowCount === 1;
  },
  async setSubscriptionMuted(q: Queryable, streamId: number, userId: number, muted: boolean): Promise<void> {
    await q.query('UPDATE messages.subscriber SET is_muted = $3 WHERE stream_id = $1 AND user_id = $2', [streamId, userId, muted]);
  },
  async setUserTopic(q: Queryable, userId: number, streamId: number, topic: string, policy: number): Promise<void> {
    if (policy === 0) {
      await q.query('DELETE FROM messages.user_topic WHERE user_id = $1 AND stream_id = $2 AND topic_key = lower($3)', [userId, streamId, topic]);
      return;
    }
    await q.query(
      `INSERT INTO messages.user_topic (user_id, stream_id, topic_key, visibility_policy) VALUES ($1, $2, lower($3), $4)
       ON CONFLICT (user_id, stream_id, topic_key) DO UPDATE SET visibility_policy = EXCLUDED.visibility_policy`,
      [userId, streamId, topic, policy],
    );
  },

  /** The personal recipient of each user, created when missing. */
  async personalRecipients(q: Queryable, realmId: number, userIds: readonly number[]): Promise<Map<number, number>> {
    await q.query(
      `INSERT INTO messages.recipient (realm_id, type, type_id, user_ids)
       SELECT $1, 1, u, ARRAY[u] FROM unnest($2::bigint[]) AS u
       ON CONFLICT (type, type_id) WHERE type_id IS NOT NULL DO NOTHING`,
      [realmId, userIds],
    );
    const { rows } = await q.query<{ id: number; type_id: number }>(
      'SELECT id, type_id FROM messages.recipient WHERE type = 1 AND type_id = ANY($1::bigint[])',
      [userIds],
    );
    return new Map(rows.map((r) => [r.type_id, r.id]));
  },
  /** Existing personal recipients only (for narrows: a missing one means no messages). */
  async findPersonalRecipients(q: Queryable, userIds: readonly number[]): Promise<Map<number, number>> {
    const { rows } = await q.query<{ id: number; type_id: number }>(
      'SELECT id, type_id FROM messages.recipient WHERE type = 1 AND type_id = ANY($1::bigint[])',
      [userIds],
    );
    return new Map(rows.map((r) => [r.type_id, r.id]));
  },
  /** The group-DM recipient of exactly these users (sorted), created when missing. */
  async huddleRecipient(q: Queryable, realmId: number, sortedUserIds: readonly number[]): Promise<number> {
    const { rows } = await q.query<{ id: number }>(
      // Two senders may start the same group conversation at once: DO UPDATE (a no-op) returns
      // the row the other committed after this statement's snapshot, where DO NOTHING would
      // return nothing and no SELECT in this statement could see it.
      `INSERT INTO messages.recipient (realm_id, type, user_ids) VALUES ($1, 3, $2::bigint[])
       ON CONFLICT (realm_id, user_ids) WHERE type = 3 DO UPDATE SET user_ids = EXCLUDED.user_ids RETURNING id`,
      [realmId, sortedUserIds],
    );
    return (rows[0] as { id: number }).id;
  },
  async findHuddleRecipient(q: Queryable, realmId: number, sortedUserIds: readonly number[]): Promise<number | undefined> {
    const { rows } = await q.query<{ id: number }>('SELECT id FROM messages.recipient WHERE realm_id = $1 AND type = 3 AND user_ids = $2::bigint[]', [
      realmId,
      sortedUserIds,
    ]);
    return rows[0]?.id;
  },
  async huddlesIncluding(q: Queryable, realmId: number, userIds: readonly number[]): Promise<number[]> {
    const { rows } = await q.query<{ id: number }>('SELECT id FROM messages.recipient WHERE realm_id = $1 AND type = 3 AND user_ids @> $2::bigint[]', [
      realmId,
      userIds,
    ]);
    return rows.map((r) => r.id);
  },
  async recipientsByIds(q: Queryable, ids: readonly number[]): Promise<RecipientRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await q.query<RecipientRow>('SELECT id, type, type_id, user_ids::int[] AS user_ids FROM messages.recipient WHERE id = ANY($1::bigint[])', [ids]);
    return rows;
  },
};

/** SQL for `subscriptions.stream` and `subscriptions.default_stream`. */
import type { Queryable } from '@zc/shared/db';

export interface StreamRow {
  id: number;
  realm_id: number;
  name: string;
  description: string;
  rendered_description: string;
  invite_only: boolean;
  is_web_public: boolean;
  history_public_to_subscribers: boolean;
  stream_post_policy: number;
  message_retention_days: number | null;
  creator_id: number | null;
  can_remove_subscribers_group_id: number;
  email_token: string;
  is_archived: boolean;
  date_created: Date;
  revision: number;
}

export type NewStream = Omit<StreamRow, 'id' | 'is_archived' | 'date_created' | 'revision'>;

/** The settings PATCH /streams/{stream_id} and archiving change. */
export type StreamChanges = Partial<
  Pick<
    StreamRow,
    | 'name'
    | 'description'
    | 'rendered_description'
    | 'invite_only'
    | 'is_web_public'
    | 'history_public_to_subscribers'
    | 'stream_post_policy'
    | 'message_retention_days'
    | 'can_remove_subscribers_group_id'
    | 'is_archived'
  >
>;

/** Column names a change may set (the keys of StreamChanges), so no other text reaches the SQL. */
const CHANGEABLE: ReadonlyArray<keyof StreamChanges> = [
  'name',
  'description',
  'rendered_description',
  'invite_only',
  'is_web_public',
  'history_public_to_subscribers',
  'stream_post_policy',
  'message_retention_days',
  'can_remove_subscribers_group_id',
  'is_archived',
];

const COLS = `id, realm_id, name, description, rendered_description, invite_only, is_web_public,
  history_public_to_subscribers, stream_post_policy, message_retention_days, creator_id,
  can_remove_subscribers_group_id, email_token, is_archived, date_created, revision`;

export const streamStore = {
  /** Throws a unique violation when the realm has a stream of that name in any case. */
  async insert(q: Queryable, s: NewStream): Promise<StreamRow> {
    const { rows } = await q.query<StreamRow>(
      `INSERT INTO subscriptions.stream (realm_id, name, description, rendered_description, invite_only, is_web_public,
         history_public_to_subscribers, stream_post_policy, message_retention_days, creator_id,
         can_remove_subscribers_group_id, email_token)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING ${COLS}`,
      [s.realm_id, s.name, s.description, s.rendered_description, s.invite_only, s.is_web_public, s.history_public_to_subscribers,
        s.stream_post_policy, s.message_retention_days, s.creator_id, s.can_remove_subscribers_group_id, s.email_token],
    );
    return rows[0] as StreamRow;
  },
  /**
   * Inserts every stream in one statement; returns the rows in the order given. Throws a
   * unique violation when a name is already taken (nothing is inserted then).
   */
  async insertMany(q: Queryable, streams: readonly NewStream[]): Promise<StreamRow[]> {
    if (streams.length === 0) return [];
    const { rows } = await q.query<StreamRow>(
      `INSERT INTO subscriptions.stream (realm_id, name, description, rendered_description, invite_only, is_web_public,
         history_public_to_subscribers, stream_post_policy, message_retention_days, creator_id,
         can_remove_subscribers_group_id, email_token)
       SELECT realm_id, name, description, rendered_description, invite_only, is_web_public,
         history_public_to_subscribers, stream_post_policy, message_retention_days, creator_id,
         can_remove_subscribers_group_id, email_token
       FROM json_populate_recordset(NULL::subscriptions.stream, $1::json) WITH ORDINALITY AS s ORDER BY ordinality
       RETURNING ${COLS}`,
      [JSON.stringify(streams)],
    );
    // RETURNING's order is not promised: back into the caller's (names are unique in a realm).
    const byName = new Map(rows.map((r) => [r.name, r]));
    return streams.map((s) => byName.get(s.name) as StreamRow);
  },
  /**
   * Applies `changes` to an active stream and bumps its revision; returns the new row, or
   * undefined when the stream is gone. Throws a unique violation for a name already taken.
   */
  async update(q: Queryable, realmId: number, id: number, changes: StreamChanges): Promise<StreamRow | undefined> {
    const cols = CHANGEABLE.filter((c) => changes[c] !== undefined);
    const sets = cols.map((c, i) => `${c} = $${i + 3}`);
    const { rows } = await q.query<StreamRow>(
      `UPDATE subscriptions.stream SET ${[...sets, 'revision = revision + 1'].join(', ')}
       WHERE realm_id = $1 AND id = $2 AND NOT is_archived RETURNING ${COLS}`,
      [realmId, id, ...cols.map((c) => changes[c])],
    );
    return rows[0];
  },
  /** The stream locked for a change (FOR UPDATE), so concurrent changes of one stream queue up. */
  async lockById(q: Queryable, realmId: number, id: number): Promise<StreamRow | undefined> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND id = $2 AND NOT is_archived FOR UPDATE`,
      [realmId, id],
    );
    return rows[0];
  },
  /** Several streams locked as lockById does, in id order (the row lock node sits above the sort). */
  async lockByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<StreamRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND id = ANY($2::bigint[]) AND NOT is_archived ORDER BY id FOR UPDATE`,
      [realmId, ids],
    );
    return rows;
  },
  async removeDefaultStream(q: Queryable, realmId: number, streamId: number): Promise<boolean> {
    const { rowCount } = await q.query('DELETE FROM subscriptions.default_stream WHERE realm_id = $1 AND stream_id = $2', [realmId, streamId]);
    return (rowCount ?? 0) > 0;
  },
  async findById(q: Queryable, realmId: number, id: number): Promise<StreamRow | undefined> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND id = $2 AND NOT is_archived`,
      [realmId, id],
    );
    return rows[0];
  },
  /** Case-insensitive, as stream names are unique regardless of case. */
  async findByName(q: Queryable, realmId: number, name: string): Promise<StreamRow | undefined> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND lower(name) = lower($2) AND NOT is_archived`,
      [realmId, name],
    );
    return rows[0];
  },
  async listByNames(q: Queryable, realmId: number, names: readonly string[]): Promise<StreamRow[]> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND lower(name) = ANY($2::text[]) AND NOT is_archived`,
      [realmId, names.map((n) => n.toLowerCase())],
    );
    return rows;
  },
  async listByIds(q: Queryable, realmId: number, ids: readonly number[]): Promise<StreamRow[]> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND id = ANY($2::bigint[]) AND NOT is_archived`,
      [realmId, ids],
    );
    return rows;
  },
  /** Every active stream of the realm, by name. */
  async listByRealm(q: Queryable, realmId: number): Promise<StreamRow[]> {
    const { rows } = await q.query<StreamRow>(
      `SELECT ${COLS} FROM subscriptions.stream WHERE realm_id = $1 AND NOT is_archived ORDER BY name, id`,
      [realmId],
    );
    return rows;
  },
  async listDefaultStreamIds(q: Queryable, realmId: number): Promise<number[]> {
    const { rows } = await q.query<{ stream_id: number }>('SELECT stream_id FROM subscriptions.default_stream WHERE realm_id = $1', [realmId]);
    return rows.map((r) => r.stream_id);
  },
  /** Whether the stream was not a default stream before. */
  async addDefaultStream(q: Queryable, realmId: number, streamId: number): Promise<boolean> {
    const { rowCount } = await q.query('INSERT INTO subscriptions.default_stream (realm_id, stream_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [realmId, streamId]);
    return (rowCount ?? 0) > 0;
  },
  /** Whether the realm has ever had a stream, archived ones included. */
  async realmHasStreams(q: Queryable, realmId: number): Promise<boolean> {
    const { rows } = await q.query<{ found: boolean }>('SELECT EXISTS (SELECT 1 FROM subscriptions.stream WHERE realm_id = $1) AS found', [realmId]);
    return rows[0]?.found ?? false;
  },
};

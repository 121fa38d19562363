import type { Queryable } from '@zc/shared/db';

/** A custom profile field definition (table users.custom_profile_field). */
export interface ProfileFieldRow {
  id: number;
  realm_id: number;
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
  order: number;
}

export interface ProfileFieldInput {
  name: string;
  hint: string;
  field_type: number;
  field_data: string;
  display_in_profile_summary: boolean;
  required: boolean;
  editable_by_user: boolean;
}

const COLS = 'id, realm_id, name, hint, field_type, field_data, display_in_profile_summary, required, editable_by_user, "order"';

export const profileFieldStore = {
  /** The realm's fields in display order. */
  async listForRealm(q: Queryable, realmId: number): Promise<ProfileFieldRow[]> {
    const { rows } = await q.query<ProfileFieldRow>(`SELECT ${COLS} FROM users.custom_profile_field WHERE realm_id = $1 ORDER BY "order", id`, [realmId]);
    return rows;
  },
  async find(q: Queryable, realmId: number, id: number): Promise<ProfileFieldRow | undefined> {
    const { rows } = await q.query<ProfileFieldRow>(`SELECT ${COLS} FROM users.custom_profile_field WHERE realm_id = $1 AND id = $2`, [realmId, id]);
    return rows[0];
  },
  /**
   * Adds a field; its `order` is its id, so it sorts after every existing one (as in Zulip).
   * A duplicate label is a unique violation.
   */
  async insert(q: Queryable, realmId: number, f: ProfileFieldInput): Promise<ProfileFieldRow> {
    const { rows } = await q.query<{ id: number }>(
      `INSERT INTO users.custom_profile_field (realm_id, name, hint, field_type, field_data, display_in_profile_summary, required, editable_by_user)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [realmId, f.name, f.hint, f.field_type, f.field_data, f.display_in_profile_summary, f.required, f.editable_by_user],
    );
    const id = (rows[0] as { id: number }).id;
    const updated = await q.query<ProfileFieldRow>(`UPDATE users.custom_profile_field SET "order" = id WHERE id = $1 RETURNING ${COLS}`, [id]);
    return updated.rows[0] as ProfileFieldRow;
  },
  async update(q: Queryable, realmId: number, id: number, f: Omit<ProfileFieldInput, 'field_type'>): Promise<void> {
    await q.query(
      `UPDATE users.custom_profile_field SET name = $3, hint = $4, field_data = $5, display_in_profile_summary = $6, required = $7, editable_by_user = $8
       WHERE realm_id = $1 AND id = $2`,
      [realmId, id, f.name, f.hint, f.field_data, f.display_in_profile_summary, f.required, f.editable_by_user],
    );
  },
  /** Deletes a field and, by cascade, every user's value of it. */
  async delete(q: Queryable, realmId: number, id: number): Promise<boolean> {
    const r = await q.query('DELETE FROM users.custom_profile_field WHERE realm_id = $1 AND id = $2', [realmId, id]);
    return (r.rowCount ?? 0) > 0;
  },
  /** Numbers the fields 0..n-1 in the given order (Zulip's try_reorder_realm_custom_profile_fields). */
  async setOrder(q: Queryable, realmId: number, orderedIds: readonly number[]): Promise<void> {
    await q.query(
      `UPDATE users.custom_profile_field f SET "order" = o.n - 1
       FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, n)
       WHERE f.realm_id = $1 AND f.id = o.id`,
      [realmId, orderedIds],
    );
  },
  async countInSummary(q: Queryable, realmId: number, exceptId: number | null): Promise<number> {
    const { rows } = await q.query<{ n: string }>(
      'SELECT count(*) AS n FROM users.custom_profile_field WHERE realm_id = $1 AND display_in_profile_summary AND id IS DISTINCT FROM $2',
      [realmId, exceptId],
    );
    return Number(rows[0]?.n ?? 0);
  },
};

export const profileValueStore = {
  async find(q: Queryable, userId: number, fieldId: number): Promise<{ value: string; rendered_value: string | null } | undefined> {
    const { rows } = await q.query<{ value: string; rendered_value: string | null }>(
      'SELECT value, rendered_value FROM users.custom_profile_field_value WHERE user_id = $1 AND field_id = $2',
      [userId, fieldId],
    );
    return rows[0];
  },
  async upsert(q: Queryable, userId: number, fieldId: number, value: string, renderedValue: string | null): Promise<void> {
    await q.query(
      `INSERT INTO users.custom_profile_field_value (user_id, field_id, value, rendered_value) VALUES ($1, $2, $3, $4)
       ON CONFLICT (user_id, field_id) DO UPDATE SET value = EXCLUDED.value, rendered_value = EXCLUDED.rendered_value`,
      [userId, fieldId, value, renderedValue],
    );
  },
  async delete(q: Queryable, userId: number, fieldId: number): Promise<boolean> {
    const r = await q.query('DELETE FROM users.custom_profile_field_value WHERE user_id = $1 AND field_id = $2', [userId, fieldId]);
    return (r.rowCount ?? 0) > 0;
  },
};

import type { Queryable } from '@zc/shared/db';

export interface RealmRow {
  id: number;
  subdomain: string;
  name: string;
  description: string;
  deactivated: boolean;
  email_address_visibility: number;
  settings: Record<string, unknown>;
  date_created: Date;
  /** The clock of role:fullmembers: members are announced as passing the waiting period up to it (actions/full-members.ts). */
  full_members_swept_at: Date;
  /** Bumped by every change to what the realm record carries (migrations/0008). */
  revision: number;
}

export interface NewRealm {
  subdomain: string;
  name: string;
  description?: string;
  settings?: Record<string, unknown>;
}

const COLS = 'id, subdomain, name, description, deactivated, email_address_visibility, settings, date_created, full_members_swept_at, revision';

export const realmStore = {
  async insert(q: Queryable, r: NewRealm): Promise<RealmRow> {
    const { rows } = await q.query<RealmRow>(
      `INSERT INTO users.realm (subdomain, name, description, settings) VALUES ($1, $2, $3, $4) RETURNING ${COLS}`,
      [r.subdomain, r.name, r.description ?? '', JSON.stringify(r.settings ?? {})],
    );
    return rows[0] as RealmRow;
  },
  async findBySubdomain(q: Queryable, subdomain: string): Promise<RealmRow | undefined> {
    const { rows } = await q.query<RealmRow>(`SELECT ${COLS} FROM users.realm WHERE subdomain = $1`, [subdomain]);
    return rows[0];
  },
  /** Locks the realm's row for the rest of the transaction. */
  async findByIdForUpdate(q: Queryable, id: number): Promise<RealmRow | undefined> {
    const { rows } = await q.query<RealmRow>(`SELECT ${COLS} FROM users.realm WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0];
  },
  /** Sets the name, description and merges `settings` into the stored settings; returns the new row. */
  async update(q: Queryable, id: number, c: { name: string; description: string; settings: Record<string, unknown> }): Promise<RealmRow> {
    const { rows } = await q.query<RealmRow>(
      `UPDATE users.realm SET name = $2, description = $3, settings = settings || $4::jsonb, revision = revision + 1 WHERE id = $1 RETURNING ${COLS}`,
      [id, c.name, c.description, JSON.stringify(c.settings)],
    );
    return rows[0] as RealmRow;
  },
  async setDeactivated(q: Queryable, id: number, deactivated: boolean): Promise<RealmRow> {
    const { rows } = await q.query<RealmRow>(`UPDATE users.realm SET deactivated = $2, revision = revision + 1 WHERE id = $1 RETURNING ${COLS}`, [id, deactivated]);
    return rows[0] as RealmRow;
  },
  async findById(q: Queryable, id: number): Promise<RealmRow | undefined> {
    const { rows } = await q.query<RealmRow>(`SELECT ${COLS} FROM users.realm WHERE id = $1`, [id]);
    return rows[0];
  },
};

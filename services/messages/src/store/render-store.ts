/**
 * What the renderer needs of a realm, read in bulk (one query per kind, cached by
 * actions/render-context.ts): users for mentions, public streams for channel links, and the
 * read models of linkifiers and alert words.
 */
import type { Linkifier } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';

export interface MentionableUser {
  id: number;
  full_name: string;
  is_active: boolean;
  /** What system groups' members follow from (policy/directMembers). */
  role: number;
  date_joined: Date;
  is_system_bot: boolean;
}

export interface LinkableStream {
  id: number;
  name: string;
}

export const renderStore = {
  async realmUsers(q: Queryable, realmId: number): Promise<MentionableUser[]> {
    const { rows } = await q.query<MentionableUser>('SELECT id, full_name, is_active, role, date_joined, is_system_bot FROM messages.user_account WHERE realm_id = $1', [realmId]);
    return rows;
  },

  /** Public, unarchived streams: the ones a channel link may name whoever sends it. */
  async realmPublicStreams(q: Queryable, realmId: number): Promise<LinkableStream[]> {
    const { rows } = await q.query<LinkableStream>(
      'SELECT id, name FROM messages.stream WHERE realm_id = $1 AND NOT invite_only AND NOT is_archived',
      [realmId],
    );
    return rows;
  },

  /** undefined: the realm's list was never received (not the same as an empty list). */
  async realmLinkifiers(q: Queryable, realmId: number): Promise<Linkifier[] | undefined> {
    const { rows } = await q.query<{ linkifiers: Linkifier[] }>('SELECT linkifiers FROM messages.realm_linkifiers WHERE realm_id = $1', [realmId]);
    return rows[0]?.linkifiers;
  },
  async setRealmLinkifiers(q: Queryable, realmId: number, linkifiers: readonly Linkifier[]): Promise<void> {
    await q.query(
      `INSERT INTO messages.realm_linkifiers (realm_id, linkifiers) VALUES ($1, $2)
       ON CONFLICT (realm_id) DO UPDATE SET linkifiers = EXCLUDED.linkifiers`,
      [realmId, JSON.stringify(linkifiers)],
    );
  },

  /** Every user of the realm who has alert words, with them. */
  async realmAlertWords(q: Queryable, realmId: number): Promise<Array<{ user_id: number; words: string[] }>> {
    const { rows } = await q.query<{ user_id: number; words: string[] }>(
      "SELECT user_id, words FROM messages.alert_words WHERE realm_id = $1 AND words <> '{}'",
      [realmId],
    );
    return rows;
  },
  async setAlertWords(q: Queryable, realmId: number, userId: number, words: readonly string[]): Promise<void> {
    await q.query(
      `INSERT INTO messages.alert_words (user_id, realm_id, words) VALUES ($1, $2, $3::text[])
       ON CONFLICT (user_id) DO UPDATE SET realm_id = EXCLUDED.realm_id, words = EXCLUDED.words`,
      [userId, realmId, words],
    );
  },
};

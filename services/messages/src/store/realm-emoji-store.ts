/** SQL for the read model `messages.realm_emoji` (see migrations/0005). */
import type { RealmEmoji } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';

const toEmoji = (r: Record<string, unknown>): RealmEmoji => ({
  id: String(r.id),
  name: String(r.name),
  source_url: String(r.source_url),
  still_url: r.still_url === null ? null : String(r.still_url),
  deactivated: r.deactivated === true,
  author_id: r.author_id === null ? null : Number(r.author_id),
});

export const realmEmojiStore = {
  /** Stores what the owner said; a row once deactivated stays so, whatever arrives later. */
  async merge(q: Queryable, realmId: number, emoji: readonly RealmEmoji[]): Promise<void> {
    if (emoji.length === 0) return;
    await q.query(
      `INSERT INTO messages.realm_emoji (id, realm_id, name, source_url, still_url, deactivated, author_id)
       SELECT e.id::bigint, $1, e.name, e.source_url, e.still_url, e.deactivated, e.author_id
         FROM jsonb_to_recordset($2::jsonb) AS e(id text, name text, source_url text, still_url text, deactivated boolean, author_id bigint)
       ON CONFLICT (id) DO UPDATE SET deactivated = messages.realm_emoji.deactivated OR EXCLUDED.deactivated`,
      [realmId, JSON.stringify(emoji)],
    );
  },

  /** The realm's emoji, active or not, with one of these names or ids. */
  async findByNamesOrIds(q: Queryable, realmId: number, names: readonly string[], ids: readonly string[]): Promise<RealmEmoji[]> {
    const numericIds = ids.filter((id) => /^[1-9][0-9]{0,14}$/.test(id));
    const { rows } = await q.query(
      `SELECT id, name, source_url, still_url, deactivated, author_id FROM messages.realm_emoji
        WHERE realm_id = $1 AND (name = ANY($2::text[]) OR id = ANY($3::bigint[])) ORDER BY id`,
      [realmId, names, numericIds],
    );
    return rows.map(toEmoji);
  },
};

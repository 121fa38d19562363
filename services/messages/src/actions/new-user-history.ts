/**
 * Zulip's add_new_user_history: someone who just signed up and joined the realm's default
 * streams finds the recent conversation of the public ones in their own message list (a view
 * without a stream narrow reads only a user's own rows), not an empty screen. The newest few
 * are unread, to read first; the rest arrive read. Runs from the subscriptions service's
 * outbox; inserting rows that exist already does nothing, so a redelivery changes nothing.
 */
import type { NewUserHistory } from '@zc/shared/contracts';
import type { MessagesDeps } from '../deps.js';
import { FLAG_BITS } from '../lib/flags.js';

/** Zulip's ONBOARDING_TOTAL_MESSAGES, ONBOARDING_UNREAD_MESSAGES and ONBOARDING_RECENT_TIMEDELTA. */
const HISTORY_MESSAGES = 1000;
const HISTORY_UNREAD = 20;
const HISTORY_DAYS = 7;

export async function doAddNewUserHistory(deps: MessagesDeps, e: NewUserHistory): Promise<void> {
  if (e.stream_ids.length === 0) return;
  // Rows the user has already (a message sent to them since they subscribed) keep their
  // flags and do not count towards the unread ones, as in Zulip.
  await deps.pool.query(
    `WITH recent AS (
       SELECT m.id FROM messages.message m
        WHERE m.recipient_id IN (SELECT recipient_id FROM messages.stream
                                  WHERE realm_id = $1 AND id = ANY($2::bigint[]) AND NOT invite_only AND NOT is_archived)
          AND m.date_sent > now() - make_interval(days => $4)
        ORDER BY m.id DESC LIMIT $5
     ), missing AS (
       SELECT r.id, row_number() OVER (ORDER BY r.id DESC) AS newest
         FROM recent r
        WHERE NOT EXISTS (SELECT 1 FROM messages.user_message um WHERE um.user_id = $3 AND um.message_id = r.id)
     )
     INSERT INTO messages.user_message (user_id, message_id, flags)
     SELECT $3, id, CASE WHEN newest <= $6 THEN 0 ELSE $7 END FROM missing ORDER BY id
     ON CONFLICT DO NOTHING`,
    [e.realm_id, e.stream_ids, e.user_id, HISTORY_DAYS, HISTORY_MESSAGES, HISTORY_UNREAD, FLAG_BITS.read],
  );
}

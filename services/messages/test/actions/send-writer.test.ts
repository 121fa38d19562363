/**
 * The send writer against PostgreSQL: a send's per-user rows are inserted without ON CONFLICT
 * (store/message-store.ts insertSends), so the writer must hand each recipient over once.
 */
import t from 'tap';
import { createPool, runMigrations } from '@zc/shared/db';
import { testEnv } from '@zc/shared/testing';
import { loadMessagesConfig } from '../../src/deps.js';
import { MIGRATIONS_DIR } from '../../src/service.js';
import { SendWriter, type PreparedSend } from '../../src/actions/send-writer.js';

function streamSend(recipients: PreparedSend['recipients']): PreparedSend {
  const date_sent = new Date();
  return {
    message: {
      realm_id: 1,
      sender_id: 10,
      recipient_id: 100,
      stream_id: 5,
      topic: 'writer',
      content: 'hello',
      rendered_content: '<p>hello</p>',
      rendered_content_version: 1,
      date_sent,
      sending_client: 'test',
      is_me_message: false,
      has_link: false,
      has_image: false,
      has_attachment: false,
    },
    recipients,
    event: {
      type: 'stream',
      content: '<p>hello</p>',
      content_type: 'text/html',
      subject: 'writer',
      stream_id: 5,
      display_recipient: 'writer stream',
      recipient_id: 100,
      sender_id: 10,
      sender_email: 'sender@zulip.test',
      sender_full_name: 'Sender',
      sender_realm_str: 'zulip',
      avatar_url: null,
      client: 'test',
      timestamp: Math.floor(date_sent.getTime() / 1000),
      is_me_message: false,
      reactions: [],
      submessages: [],
      topic_links: [],
      raw_content: 'hello',
      sender_delivery_email: 'sender@zulip.test',
      sender_avatar_source: 'G',
      sender_avatar_version: 1,
    },
  };
}

t.test('a send that lists a recipient twice', async (t) => {
  const env = await testEnv(t);
  const pool = createPool(env.databaseUrl, { max: 4 });
  t.teardown(() => pool.end());
  await runMigrations(pool, 'messages', MIGRATIONS_DIR);
  const writer = new SendWriter({ pool, settings: loadMessagesConfig() });

  const id = await writer.submit(streamSend([{ id: 10, flags: 1 }, { id: 11, flags: 0 }, { id: 10, flags: 0 }, { id: 12, flags: 8 }]));
  const { rows } = await pool.query<{ user_id: string; flags: number }>('SELECT user_id, flags FROM messages.user_message WHERE message_id = $1 ORDER BY user_id', [id]);
  t.same(rows.map((r) => [Number(r.user_id), r.flags]), [[10, 1], [11, 0], [12, 8]], "one row per user, the first entry's flags");
  const outbox = await pool.query<{ payload: { users: unknown[] } }>("SELECT payload FROM messages.outbox WHERE subject LIKE '%inbox.v1.notify'");
  t.same(outbox.rows[0]?.payload.users, [{ id: 10, flags: ['read'] }, 11, { id: 12, flags: ['mentioned'] }], 'the event lists each recipient once');
});

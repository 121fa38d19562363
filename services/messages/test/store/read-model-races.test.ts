/**
 * The messages read model is written from two sides at once: the consumer applying the
 * owners' domain events, and a request that just asked the owner (read your writes). Those
 * writes race for rows that do not exist yet; each must still come back with the row.
 */
import t from 'tap';
import { createPool, runMigrations } from '@zc/shared/db';
import { testEnv } from '@zc/shared/testing';
import type { StreamRecord } from '@zc/shared/contracts';
import { MIGRATIONS_DIR } from '../../src/service.js';
import { readModelStore } from '../../src/store/read-model-store.js';

const stream = (id: number): StreamRecord => ({
  stream_id: id,
  realm_id: 1,
  name: `stream ${id}`,
  description: '',
  rendered_description: '',
  invite_only: false,
  is_web_public: false,
  history_public_to_subscribers: true,
  stream_post_policy: 1,
  message_retention_days: null,
  date_created: 0,
  creator_id: null,
  can_remove_subscribers_group_id: 1,
  is_archived: false,
});

t.test('concurrent first writes of the same row', async (t) => {
  const env = await testEnv(t);
  const pool = createPool(env.databaseUrl, { max: 16 });
  t.teardown(() => pool.end());
  await runMigrations(pool, 'messages', MIGRATIONS_DIR);

  t.test('a new stream upserted twice at once gets one recipient, and both callers see it', async (t) => {
    for (let round = 0; round < 20; round++) {
      const ids = Array.from({ length: 6 }, (_, i) => 1000 + round * 10 + i);
      const rows = await Promise.all(ids.flatMap((id) => [readModelStore.upsertStream(pool, stream(id)), readModelStore.upsertStream(pool, stream(id))]));
      for (let i = 0; i < rows.length; i += 2) {
        t.ok(rows[i]?.recipient_id, `stream ${rows[i]?.id}: a recipient`);
        t.equal(rows[i]?.recipient_id, rows[i + 1]?.recipient_id, 'the same recipient for both writers');
      }
    }
  });

  t.test('a new group DM recipient created by two senders at once is one recipient', async (t) => {
    for (let round = 0; round < 20; round++) {
      const users = [round * 3 + 1, round * 3 + 2, round * 3 + 3];
      const got = await Promise.all(Array.from({ length: 4 }, () => readModelStore.huddleRecipient(pool, 1, users)));
      t.ok(got.every((id) => typeof id === 'number' && id > 0), 'every caller gets an id');
      t.equal(new Set(got).size, 1, 'one recipient');
    }
  });
});

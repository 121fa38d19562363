/**
 * Deleting a realm as an operator does (`npm run manage -- delete-realm`, Zulip's delete_realm),
 * on local disk and on S3 (s3rver): a live realm is refused; once deactivated, every row of it
 * goes from every schema (checked table by table against what the other realm owns, so a row
 * the deletion missed shows however the catalog attributes it), its uploads, thumbnails and
 * emoji images go from the storage, its presence and event queues from Redis. A run cut off
 * half-way is finished by running it again. The other realm keeps every row and file and
 * still works through the API, and the freed subdomain can host a new realm.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import t from 'tap';
import { deleteRealm, exportRealm, SCHEMAS } from '@zc/shared/admin';
import { createPool } from '@zc/shared/db';
import { archiveFiles, type UploadsSettings } from '@zc/uploads';
import type { ApiClient } from '../client.js';
import { startSystem } from '../harness.js';
import { startTestS3 } from '../s3-server.js';
import { manage, manageEnv } from './manage-support.js';
import { imageFile, png, postEmoji } from './realm-emoji-support.js';
import { filesUnder, otherRealmOwner, raw, until, upload } from './uploads-support.js';

t.setTimeout(240_000);

/** Sends once the stream is known to the messages service (subscribing reaches it through the bus). */
async function sendTo(client: ApiClient, stream: string, content: string): Promise<number> {
  let id = 0;
  await until(async () => {
    const r = await client.call<{ id: number }>('POST', '/messages', { type: 'stream', to: stream, topic: 'plans', content });
    id = r.status === 200 ? r.body.id : 0;
    return id > 0;
  });
  return id;
}

for (const backend of ['local', 's3'] as const) {
  t.test(`delete-realm on ${backend} storage`, async (t) => {
    const s3 = backend === 's3' ? await startTestS3(t) : undefined;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-delete-realm-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const storage: UploadsSettings['storage'] = s3
      ? { kind: 's3', bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, redirectDownloads: false, signedUrlTtlSeconds: 60 }
      : { kind: 'local', dir };
    const sys = await startSystem(t, { uploads: { storage } });
    const env = {
      ...manageEnv(sys),
      ...(s3
        ? { ZC_UPLOADS_BACKEND: 's3', ZC_S3_BUCKET: s3.bucket, ZC_S3_ENDPOINT: s3.endpoint, ZC_S3_FORCE_PATH_STYLE: 'true', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' }
        : { ZC_UPLOADS_BACKEND: 'local', ZC_UPLOADS_DIR: dir }),
    };
    const s3c = s3 && new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
    t.teardown(() => s3c?.destroy());
    const stored = async () => (s3c && s3 ? ((await s3c.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((o) => o.Key ?? '').sort() : filesUnder(dir).filter((f) => !f.startsWith('.partial/')));
    const pool = createPool(sys.env.databaseUrl, { max: 2 });
    t.teardown(() => pool.end());
    const redis = new Redis(sys.env.infra.redisUrl);
    t.teardown(() => redis.disconnect());
    const doomed = sys.realmId; // the development realm, subdomain ''
    const { hamlet, othello, iago } = sys.people;

    // The doomed realm: a stream, uploads linked from a message (one previewed, so a
    // thumbnail), a reaction, a custom emoji, presence and an event queue.
    const h = sys.client(hamlet);
    t.equal((await h.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'doomed' }]) })).status, 200);
    const note = await upload(sys, hamlet, [{ filename: 'plans.txt', data: Buffer.from('the realm\'s secret plans') }]);
    const photo = await upload(sys, hamlet, [{ filename: 'castle.png', contentType: 'image/png', data: await png(900, 600) }]);
    t.equal(photo.status, 200);
    const linked = await sendTo(h, 'doomed', `[plans](${note.json.uri}) and [castle](${photo.json.uri})`);
    t.ok(linked, 'a message links both');
    t.equal((await sys.client(othello).post(`/messages/${linked}/reactions`, { emoji_name: 'octopus' })).status, 200);
    t.equal((await postEmoji(sys, iago, 'doomed_flag', [imageFile(await png(64, 64))])).status, 200);
    t.equal((await h.post('/users/me/presence', { status: 'active' })).status, 200);
    t.equal((await sys.client(othello).post('/register', {})).status, 200);

    // The realm that stays: its own stream, upload, message, emoji, presence and queue.
    const norway = await otherRealmOwner(sys, t);
    const f = sys.client(norway.owner, { host: norway.host });
    t.equal((await f.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'fjords' }]) })).status, 200);
    const map = await upload(sys, norway.owner, [{ filename: 'map.png', contentType: 'image/png', data: await png(900, 600, { r: 10, g: 90, b: 200 }) }], { host: norway.host });
    t.equal(map.status, 200);
    const kept = await sendTo(f, 'fjords', `the [map](${map.json.uri})`);
    t.ok(kept, 'norway has a message');
    t.equal((await postEmoji(sys, norway.owner, 'fjord', [imageFile(await png(64, 64))], { host: norway.host })).status, 200);
    t.equal((await f.post('/users/me/presence', { status: 'active' })).status, 200);
    t.equal((await f.post('/register', {})).status, 200);
    await sys.flushOutboxes();

    // Dead letters an operator kept (events the bus could not carry): they hold realm data too.
    for (const realmId of [doomed, norway.realmId]) {
      await pool.query(`INSERT INTO messages.outbox_dead (id, subject, payload, txid, created_at, reason) VALUES ($1, 'test.dead', $2, 1, now(), 'too big')`, [-realmId, { realm_id: realmId, content: 'x' }]);
    }

    const filesBefore = await stored();
    const underRealm = (realmId: number) => (k: string) => [`${realmId}/`, `thumbnail/${realmId}/`, `avatars/${realmId}/`].some((p) => k.startsWith(p));
    const doomedFiles = filesBefore.filter(underRealm(doomed));
    const norwayFiles = filesBefore.filter(underRealm(norway.realmId));
    t.equal(doomedFiles.length, 2 + 1 + 2, 'two uploads, a thumbnail, an emoji (image and original)');
    t.equal(norwayFiles.length, 1 + 1 + 2, 'norway: an upload, its thumbnail, an emoji');
    t.same(filesBefore, [...doomedFiles, ...norwayFiles].sort(), 'nothing else stored');
    const norwayRows = async () => {
      const a = await exportRealm(pool, 'norway');
      return Object.fromEntries(Object.entries(a.tables).map(([n, rows]) => [n, rows.length]));
    };
    const norwayBefore = await norwayRows();

    const live = await manage(['delete-realm', '--realm', '', '--confirm', ''], env);
    t.match(live, { code: 1, json: { result: 'error', msg: "realm '' is active: deactivate it first (deactivate-realm)" } }, 'a live realm is refused');
    t.equal((await h.get('/users/me')).status, 200, 'and keeps working');
    t.same(await stored(), filesBefore, 'with every file');

    t.equal((await manage(['deactivate-realm', '--realm', ''], env)).code, 0);

    // A table the catalog cannot attribute to a realm stops the deletion before anything goes.
    await pool.query('CREATE TABLE drafts.stray (note text)');
    const noFiles = async (): Promise<number> => {
      throw new Error('no file may go');
    };
    await t.rejects(deleteRealm(pool, '', { removeFiles: noFiles }), { name: 'RealmDeletionError', message: 'cannot tell which rows of drafts.stray belong to a realm; nothing deleted' });
    await pool.query('DROP TABLE drafts.stray');

    // Cut off after the files went (the Redis step fails): the rows stay, so it can run again.
    const files = archiveFiles(storage);
    t.teardown(() => files.close());
    let removedFirst = 0;
    await t.rejects(
      deleteRealm(pool, '', {
        removeFiles: async (id) => (removedFirst = await files.removeRealm(id)),
        dropRedisState: async () => {
          throw new Error('connection to Redis lost');
        },
      }),
      /connection to Redis lost/,
    );
    t.equal(removedFirst, doomedFiles.length, 'every file of the realm was removed, and counted');
    t.same(await stored(), norwayFiles, 'only the other realm\'s files are left');
    t.equal((await pool.query('SELECT 1 FROM users.realm WHERE id = $1', [doomed])).rowCount, 1, 'the interrupted run left the realm');
    t.ok(Number((await pool.query('SELECT count(*) FROM messages.message WHERE realm_id = $1', [doomed])).rows[0].count) > 0, 'and its messages');
    // An upload that was being written when the first run stopped.
    const straggler = `${doomed}/ab/straggler/late.txt`;
    await files.write(straggler, Buffer.from('late'), 'text/plain');

    const done = await manage(['delete-realm', '--realm', '', '--confirm', ''], env);
    t.equal(done.code, 0, done.stderr);
    t.match(done.json, { realm_id: doomed, subdomain: '', files: 1 }, 'the second run finishes the job');
    t.ok((done.json.rows as number) > 50, `${done.json.rows} rows deleted`);
    t.match(done.json.tables, { 'users.realm': 1, 'messages.message': Number, 'messages.reaction': 1, 'uploads.attachment': 2, 'uploads.realm_emoji': 1, 'subscriptions.stream': Number });
    t.ok((done.json.redis_keys as number) >= 1, `${done.json.redis_keys} Redis keys removed (presence at least)`);

    // Nothing of the realm in any table: every table holds exactly what norway owns.
    const { rows: tables } = await pool.query<{ name: string }>(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema = ANY($1) AND table_name NOT IN ('outbox', 'outbox_dead', 'schema_migrations') ORDER BY 1`,
      [[...SCHEMAS]],
    );
    const norwayAfter = await norwayRows();
    t.same(norwayAfter, norwayBefore, 'norway keeps every row');
    for (const { name } of tables) {
      const total = Number((await pool.query(`SELECT count(*) FROM ${name}`)).rows[0].count);
      t.equal(total, norwayAfter[name] ?? 0, `${name}: only norway's rows are left`);
    }
    t.equal(done.json.tables && (done.json.tables as Record<string, number>)['messages.outbox_dead'], 1, 'its dead letter went');
    t.equal((await pool.query('SELECT 1 FROM messages.outbox_dead WHERE id = $1', [-norway.realmId])).rowCount, 1, "norway's stayed");
    for (const schema of SCHEMAS) {
      const left = await pool.query(`SELECT 1 FROM "${schema}".outbox WHERE payload->>'realm_id' = $1::text UNION ALL SELECT 1 FROM "${schema}".outbox_dead WHERE payload->>'realm_id' = $1::text`, [doomed]);
      t.equal(left.rowCount, 0, `${schema}: no event of the realm waits in the outbox`);
    }
    t.same(await stored(), norwayFiles, 'the storage holds norway\'s files only');

    const prefix = sys.env.prefix;
    t.same(await redis.keys(`${prefix}:users:presence:{${doomed}}*`), [], 'no presence key of the realm');
    t.equal(await redis.exists(`${prefix}:evq:realm:${doomed}:public`, ...[hamlet, othello, iago].map((a) => `${prefix}:evq:user:${a.user_id}`)), 0, 'no queue index of its users');
    t.equal((await redis.keys(`${prefix}:users:presence:{${norway.realmId}}*`)).length > 0, true, 'norway\'s presence is kept');
    t.equal(await redis.exists(`${prefix}:evq:user:${norway.owner.user_id}`), 1, 'and its queue');

    t.match(await h.get('/users/me'), { status: 401, body: { code: 'INVALID_API_KEY' } }, 'the deleted realm\'s keys are refused');
    t.equal((await raw(sys, 'GET', note.json.uri, { as: hamlet })).status, 401, 'its files are not served');

    // Norway still works through the API.
    t.equal((await f.get('/users/me')).status, 200);
    const history = await f.get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: JSON.stringify([{ operator: 'stream', operand: 'fjords' }]) });
    t.same((history.body.messages as Array<{ id: number }>).map((m) => m.id), [kept], 'its message');
    const mapBack = await raw(sys, 'GET', map.json.uri, { as: norway.owner, host: norway.host });
    t.equal(mapBack.status, 200, 'its upload');
    t.ok(await sendTo(f, 'fjords', 'still here'), 'it can send');
    const emoji = Object.values((await f.get('/realm/emoji')).body.emoji as Record<string, { name: string; source_url: string }>).map((e) => e.name);
    t.same(emoji, ['fjord'], 'its emoji');

    const again = await manage(['delete-realm', '--realm', '', '--confirm', ''], env);
    t.match(again, { code: 1, json: { msg: "no realm with subdomain ''" } }, 'nothing left to delete');

    // The subdomain is free again.
    const fresh = await manage(['create-realm', '--name', 'Elsinore again', '--subdomain', '', '--owner-email', 'horatio@zulip.test', '--owner-password', 'x'.repeat(12), '--owner-name', 'Horatio'], env);
    t.equal(fresh.code, 0, fresh.stderr);
    const horatio = { user_id: fresh.json.user_id as number, email: 'horatio@zulip.test', api_key: fresh.json.api_key as string, full_name: 'Horatio', password: '' };
    t.ok(await until(async () => (await sys.client(horatio).get('/users/me')).status === 200), 'a new realm serves the freed subdomain');
  });
}

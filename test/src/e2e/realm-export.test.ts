/**
 * Realm export and import as the backup and migration path (issue 15): a realm with people,
 * a stream, messages, a reaction and an uploaded file is exported to JSON, imported into a
 * fresh database (every schema migrated, nothing else), and a system started there serves the
 * same realm through the API: same API keys, messages, reactions, subscriptions, files and thumbnails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { exportRealm, importRealm } from '@zc/shared/admin';
import { createPool, runMigrations } from '@zc/shared/db';
import { startService, type ServiceDefinition } from '@zc/shared/service';
import { testEnv } from '@zc/shared/testing';
import { draftsService } from '@zc/drafts';
import { eventsService } from '@zc/events';
import { gatewayService } from '@zc/gateway';
import { messagesService } from '@zc/messages';
import { subscriptionsService } from '@zc/subscriptions';
import { archiveFiles, uploadsService } from '@zc/uploads';
import { usersService } from '@zc/users';
import { ApiClient } from '../client.js';
import { startSystem } from '../harness.js';
import { animatedGif, imageFile, png, postEmoji } from './realm-emoji-support.js';
import { upload } from './uploads-support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('export, import into a fresh database, and the realm answers the same', async (t) => {
  const dir1 = mkdtempSync(path.join(os.tmpdir(), 'zc-export-a-'));
  const dir2 = mkdtempSync(path.join(os.tmpdir(), 'zc-export-b-'));
  t.teardown(() => [dir1, dir2].forEach((d) => rmSync(d, { recursive: true, force: true })));
  const sys = await startSystem(t, { uploads: { storage: { kind: 'local', dir: dir1 } } });
  const hamlet = sys.client(sys.people.hamlet);
  t.equal((await hamlet.call('POST', '/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'archive' }]) })).status, 200);
  await sys.flushOutboxes();
  const up = await upload(sys, sys.people.hamlet, [{ filename: 'notes.txt', data: Buffer.from('kept across servers') }]);
  t.equal(up.status, 200);
  const uri = (up.json as { uri: string }).uri;
  const image = await upload(sys, sys.people.hamlet, [{ filename: 'castle.png', contentType: 'image/png', data: await png(100, 80) }]);
  const imagePathId = (image.json as { uri: string }).uri.slice('/user_uploads/'.length);
  const ids: number[] = [];
  for (const content of ['first words', `with a [file](${uri}) and [castle.png](/user_uploads/${imagePathId})`]) {
    for (let i = 0; i < 50; i++) {
      const r = await hamlet.call<{ id: number }>('POST', '/messages', { type: 'stream', to: 'archive', topic: 'backup', content });
      if (r.status === 200) {
        ids.push(r.body.id);
        break;
      }
      await sleep(100);
    }
  }
  t.equal(ids.length, 2, 'two messages sent');
  t.equal((await hamlet.call('POST', `/messages/${ids[0]}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.equal((await postEmoji(sys, sys.people.hamlet, 'yorick', [imageFile(await png(40, 40))])).status, 200, 'a custom emoji');
  t.equal((await postEmoji(sys, sys.people.hamlet, 'yorick_jig', [imageFile(await animatedGif(40, 40), 'dancing.gif')])).status, 200, 'an animated one');
  const emoji = (await hamlet.call<{ emoji: Record<string, { name: string; source_url: string; still_url: string | null }> }>('GET', '/realm/emoji')).body.emoji;
  const emojiUrls = Object.values(emoji).flatMap((e) => [e.source_url, ...(e.still_url ? [e.still_url] : [])]);
  t.equal(emojiUrls.length, 3, 'two images and a still frame');
  await sys.flushOutboxes();
  await sleep(300);
  const before = await hamlet.call<{ messages: Array<Record<string, unknown>> }>('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'stream', operand: 'archive' }]) });

  const pool1 = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => pool1.end());
  const files1 = archiveFiles({ kind: 'local', dir: dir1 });
  const archive = JSON.parse(JSON.stringify(await exportRealm(pool1, '', files1))) as Awaited<ReturnType<typeof exportRealm>>;
  t.equal(archive.realm.id, sys.realmId);
  t.ok((archive.tables['messages.message'] ?? []).length >= 2, 'messages exported');
  const emojiKeys = Object.keys(archive.files).filter((k) => k.startsWith(`avatars/${sys.realmId}/emoji/`));
  t.same(
    Object.keys(archive.files).filter((k) => !emojiKeys.includes(k)).sort(),
    [uri.slice('/user_uploads/'.length), imagePathId, `thumbnail/${imagePathId}/840x560.webp`].sort(),
    'the uploaded files and the thumbnail travel with it',
  );
  t.equal(emojiKeys.length, 5, 'and the custom emoji: two images, their originals and the still frame');
  await t.rejects(exportRealm(pool1, 'nope'), /no realm with subdomain 'nope'/, 'an unknown realm is named');
  await t.rejects(importRealm(pool1, archive), /already exists here/, 'importing over the same realm is refused');

  // A new server: every schema migrated, no realm.
  const env2 = await testEnv(t);
  env2.config.secretKey = sys.env.config.secretKey; // API keys are HMACs under it
  const pool2 = createPool(env2.databaseUrl, { max: 2 });
  t.teardown(() => pool2.end());
  const defs: ServiceDefinition[] = [usersService, subscriptionsService, messagesService, draftsService, uploadsService({ storage: { kind: 'local', dir: dir2 }, sweepIntervalSeconds: 0 })];
  for (const d of defs) if (d.migrationsDir) await runMigrations(pool2, d.name, d.migrationsDir, d.migrationLibraries);
  const imported = await importRealm(pool2, archive, archiveFiles({ kind: 'local', dir: dir2 }));
  t.match(imported, { realm_id: sys.realmId, files: 8 });
  t.ok(imported.rows > 20, `${imported.rows} rows written`);

  const gw = gatewayService({ port: 0, host: '127.0.0.1', rateLimitPerMinute: 0, rateLimitPerIpPerMinute: 0, authFailuresPerIpPerMinute: 0 });
  const running: Array<{ stop(): Promise<void> }> = [];
  for (const d of [...defs, eventsService, gw]) running.push(await startService(d, { config: env2.config, admin: false }));
  t.teardown(async () => {
    for (const s of running.reverse()) await s.stop();
  });
  const base = `http://127.0.0.1:${gw.port()}`;
  const hamlet2 = new ApiClient(base, { email: sys.people.hamlet.email, apiKey: sys.people.hamlet.api_key });

  const me = await hamlet2.call<{ user_id: number; email: string }>('GET', '/users/me');
  t.match(me, { status: 200, body: { user_id: sys.people.hamlet.user_id } }, 'the same API key works on the new server');
  const after = await hamlet2.call<{ messages: Array<Record<string, unknown>> }>('GET', '/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: JSON.stringify([{ operator: 'stream', operand: 'archive' }]) });
  t.equal(after.status, 200);
  const view = (ms: Array<Record<string, unknown>>) => ms.map((m) => ({ id: m.id, content: m.content, subject: m.subject, reactions: (m.reactions as Array<{ emoji_name: string }>).map((r) => r.emoji_name) }));
  t.same(view(after.body.messages), view(before.body.messages), 'the same messages, contents and reactions');
  const subs = await hamlet2.call<{ subscriptions: Array<{ name: string }> }>('GET', '/users/me/subscriptions');
  t.ok(subs.body.subscriptions.some((s) => s.name === 'archive'), 'subscriptions kept');
  const auth = { authorization: `Basic ${Buffer.from(`${sys.people.hamlet.email}:${sys.people.hamlet.api_key}`).toString('base64')}` };
  const file = await fetch(`${base}${uri}`, { headers: auth });
  t.equal(file.status, 200);
  t.equal(await file.text(), 'kept across servers', 'the file is served from the new storage');
  const thumbnail = await fetch(`${base}/user_uploads/thumbnail/${imagePathId}/840x560.webp`, { headers: auth });
  t.equal(thumbnail.status, 200, 'the preview\'s thumbnail too');
  for (const url of emojiUrls) {
    const before = await fetch(`${sys.baseUrl}${url}`);
    const moved = await fetch(`${base}${url}`);
    t.equal(moved.status, 200, `${url} served by the new server`);
    t.same(Buffer.from(await moved.arrayBuffer()), Buffer.from(await before.arrayBuffer()), `${url}: the same image`);
  }
  // New rows get ids after the imported ones.
  const sent = await hamlet2.call<{ id: number }>('POST', '/messages', { type: 'stream', to: 'archive', topic: 'backup', content: 'after the move' });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  t.ok(sent.body.id > Math.max(...ids), 'identity sequences continue after the imported ids');
});

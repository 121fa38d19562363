/**
 * Thumbnails of uploaded images (Zulip 9's inline previews): a message linking an uploaded
 * image renders a preview whose `src` is its thumbnail, with the original's dimensions (and
 * `data-animated` for animated images); /user_uploads/thumbnail/{path}/{format} serves it
 * under the file's own access rules; /register announces the formats. What is not an image,
 * or is one over the pixel limit (a decompression bomb), is a plain file: no preview, no
 * thumbnail, and the upload still succeeds without decoding it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { startSystem } from '../harness.js';
import { MessagesWorld } from './messages-fixtures.js';
import { animatedGif, png, pngDeclaring } from './realm-emoji-support.js';
import { otherRealmOwner, raw, until, upload } from './uploads-support.js';

const STILL = '840x560.webp';
const ANIMATED = '840x560-anim.webp';

t.test('thumbnails of uploaded images', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-thumbnails-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sys = await startSystem(t, { uploads: { storage: { kind: 'local', dir } } });
  const { hamlet, othello, desdemona } = sys.people;
  const w = new MessagesWorld(sys);
  t.teardown(() => w.close());
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id]);
  await w.createStream('Secret', [hamlet.user_id, desdemona.user_id], { invite_only: true });

  const uploadAs = async (as: typeof hamlet, filename: string, contentType: string, data: Buffer) => {
    const r = await upload(sys, as, [{ filename, contentType, data }]);
    if (r.status !== 200) throw new Error(`upload failed: ${JSON.stringify(r.json)}`);
    return { uri: r.json.uri as string, pathId: (r.json.uri as string).slice('/user_uploads/'.length) };
  };
  const send = async (stream: string, content: string) => {
    const r = await sys.client(hamlet).post('/messages', { type: 'stream', to: stream, topic: 'pictures', content });
    if (r.status !== 200) throw new Error(`send failed: ${JSON.stringify(r.body)}`);
    const got = await sys.client(hamlet).get(`/messages/${r.body.id}`);
    return { id: r.body.id as number, html: (got.body.message as { content: string }).content };
  };
  const thumbnail = (pathId: string, format: string, as?: typeof hamlet, host?: string) =>
    raw(sys, 'GET', `/user_uploads/thumbnail/${pathId}/${format}`, { ...(as ? { as } : {}), ...(host ? { host } : {}) });

  const photo = await uploadAs(hamlet, 'castle photo.png', 'image/png', await png(2000, 1000));

  t.test('/register announces the thumbnail formats', async (t) => {
    const r = await sys.client(hamlet).post('/register', { fetch_event_types: ['realm'] });
    t.equal(r.status, 200);
    t.same(r.body.server_thumbnail_formats, [
      { name: ANIMATED, max_width: 840, max_height: 560, format: 'webp', animated: true },
      { name: STILL, max_width: 840, max_height: 560, format: 'webp', animated: false },
    ]);
  });

  t.test('a message linking an uploaded image renders its thumbnail as the preview', async (t) => {
    const { html } = await send('Denmark', `[castle photo.png](${photo.uri})`);
    t.equal(
      html,
      `<p><a href="${photo.uri}">castle photo.png</a></p>\n` +
        `<div class="message_inline_image"><a href="${photo.uri}" title="castle photo.png">` +
        `<img data-original-dimensions="2000x1000" src="/user_uploads/thumbnail/${photo.pathId}/${STILL}"></a></div>`,
    );
    const narrow = await sys.client(hamlet).get('/messages', { anchor: 'newest', num_before: 5, num_after: 0, narrow: [{ operator: 'has', operand: 'image' }] });
    t.equal((narrow.body.messages as unknown[]).length, 1, 'has:image finds it');
  });

  t.test('an edit that adds the link, and POST /messages/render, preview it too', async (t) => {
    const { id } = await send('Denmark', 'a picture follows');
    t.equal((await sys.client(hamlet).patch(`/messages/${id}`, { content: `here: [castle photo.png](${photo.uri})` })).status, 200);
    const edited = await sys.client(hamlet).get(`/messages/${id}`);
    t.match((edited.body.message as { content: string }).content, `src="/user_uploads/thumbnail/${photo.pathId}/${STILL}"`);
    const rendered = await sys.client(hamlet).post('/messages/render', { content: `[castle photo.png](${photo.uri})` });
    t.match(rendered.body.rendered, `<img data-original-dimensions="2000x1000" src="/user_uploads/thumbnail/${photo.pathId}/${STILL}">`);
  });

  t.test('the thumbnail is a WebP fitted into 840x560, served inline under the file access rule', async (t) => {
    const mine = await thumbnail(photo.pathId, STILL, hamlet);
    t.equal(mine.status, 200);
    t.equal(mine.headers['content-type'], 'image/webp');
    t.match(mine.headers['content-disposition'], /^inline; /);
    t.equal(mine.headers['x-content-type-options'], 'nosniff');
    t.match(await sharp(mine.body).metadata(), { format: 'webp', width: 840, height: 420 });
    t.ok(await until(async () => (await thumbnail(photo.pathId, STILL, othello)).status === 200), 'a subscriber who can read the linking message');
    t.equal((await thumbnail(photo.pathId, STILL)).status, 401, 'no credentials');
  });

  t.test('formats not made, unknown formats and malformed paths are not found', async (t) => {
    for (const [p, why] of [
      [`${photo.pathId}/${ANIMATED}`, 'no animated thumbnail of a still image'],
      [`${photo.pathId}/100x100.webp`, 'not a format of this server'],
      [`${photo.pathId}/..%2F..%2F${STILL}`, 'traversal in the format'],
      [photo.pathId, 'no format'],
      [`${sys.realmId}/..%2F..%2Fetc/passwd/${STILL}`, 'traversal in the path'],
    ] as const) {
      const r = await raw(sys, 'GET', `/user_uploads/thumbnail/${p}`, { as: hamlet });
      t.equal(r.status, 404, why);
      t.equal(r.json?.msg, 'File not found', why);
    }
  });

  t.test('nobody from another realm; a non-subscriber of a private stream may not', async (t) => {
    const other = await otherRealmOwner(sys, t);
    t.equal((await thumbnail(photo.pathId, STILL, other.owner, other.host)).status, 404, 'another realm');
    const secret = await uploadAs(hamlet, 'map.png', 'image/png', await png(300, 200));
    const { html } = await send('Secret', `the map: [map.png](${secret.uri})`);
    t.match(html, `src="/user_uploads/thumbnail/${secret.pathId}/${STILL}"`);
    t.ok(await until(async () => (await thumbnail(secret.pathId, STILL, desdemona)).status === 200), 'a subscriber may');
    const denied = await thumbnail(secret.pathId, STILL, othello);
    t.equal(denied.status, 403, 'a non-subscriber may not');
    t.match(denied.json, { result: 'error', msg: 'You are not authorized to view this file.' });
  });

  t.test('an animated image is marked animated and has both formats', async (t) => {
    const gif = await uploadAs(hamlet, 'dance.gif', 'image/gif', await animatedGif(120, 80, 3));
    const { html } = await send('Denmark', `[dance.gif](${gif.uri})`);
    t.match(html, `<img data-animated="true" data-original-dimensions="120x80" src="/user_uploads/thumbnail/${gif.pathId}/${STILL}">`);
    const still = await thumbnail(gif.pathId, STILL, hamlet);
    t.match(await sharp(still.body).metadata(), { format: 'webp', width: 120, height: 80 }, 'never enlarged');
    const moving = await thumbnail(gif.pathId, ANIMATED, hamlet);
    t.equal(moving.status, 200);
    t.match(await sharp(moving.body, { animated: true }).metadata(), { format: 'webp', pages: 3 });
  });

  t.test('what is not an image gets no preview and no thumbnail, whatever its name', async (t) => {
    const fake = await uploadAs(hamlet, 'fake.png', 'image/png', Buffer.from('not really a picture'));
    const doc = await uploadAs(hamlet, 'notes.txt', 'text/plain', Buffer.from('notes'));
    const { html } = await send('Denmark', `[fake.png](${fake.uri}) [notes.txt](${doc.uri})`);
    t.equal(html, `<p><a href="${fake.uri}">fake.png</a> <a href="${doc.uri}">notes.txt</a></p>`);
    t.equal((await thumbnail(fake.pathId, STILL, hamlet)).status, 404);
    t.equal((await thumbnail(doc.pathId, STILL, hamlet)).status, 404);
  });

  t.test('a decompression bomb is stored as a plain file, never decoded', async (t) => {
    const bomb = pngDeclaring(50_000, 50_000);
    t.ok(bomb.length < 200, 'a few dozen bytes declaring 2.5 gigapixels');
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const up = await uploadAs(hamlet, 'bomb.png', 'image/png', bomb);
    t.ok(Date.now() - started < 5000, 'answered at once');
    t.ok(process.memoryUsage().rss - rssBefore < 200 * 1024 * 1024, 'no memory blow-up (decoding would need 7.5 GB)');
    const { html } = await send('Denmark', `[bomb.png](${up.uri})`);
    t.equal(html, `<p><a href="${up.uri}">bomb.png</a></p>`, 'no preview');
    t.equal((await thumbnail(up.pathId, STILL, hamlet)).status, 404);
    const file = await raw(sys, 'GET', up.uri, { as: hamlet });
    t.same(file.body, bomb, 'the file itself is still there');
  });

  t.test('after the linking message is deleted, and after the attachment is deleted', async (t) => {
    const pic = await uploadAs(hamlet, 'ghost.png', 'image/png', await png(64, 64));
    const { id } = await send('Denmark', `[ghost.png](${pic.uri})`);
    t.ok(await until(async () => (await thumbnail(pic.pathId, STILL, othello)).status === 200));
    t.equal((await sys.client(desdemona).delete(`/messages/${id}`)).status, 200);
    t.ok(await until(async () => (await thumbnail(pic.pathId, STILL, othello)).status === 403), 'the message is gone: so is othello\'s access');
    t.equal((await thumbnail(pic.pathId, STILL, hamlet)).status, 200, 'the uploader keeps it');

    const list = await sys.client(hamlet).get('/attachments');
    const attachment = (list.body.attachments as Array<{ id: number; path_id: string }>).find((a) => a.path_id === pic.pathId);
    t.equal((await sys.client(hamlet).delete(`/attachments/${attachment?.id}`)).status, 200);
    t.equal((await thumbnail(pic.pathId, STILL, hamlet)).status, 404, 'gone with the file');
    const { html } = await send('Denmark', `[ghost.png](${pic.uri})`);
    t.equal(html, `<p><a href="${pic.uri}">ghost.png</a></p>`, 'a link to a deleted image previews nothing');
  });
});

/**
 * Uploads and attachments end to end (spec 4.20, 8): POST /user_uploads, downloads under
 * Zulip's access rules, attachments linked by messages, GET and DELETE /attachments, the
 * `attachment` events, and every refusal (empty or broken multipart, oversize, two files,
 * path traversal, a cut-off upload), each leaving nothing behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import t from 'tap';
import { clientEventSchema } from '@zc/shared/contracts/client-events';
import { messagesEvents } from '@zc/shared/contracts';
import { createPool } from '@zc/shared/db';
import { addToOutbox } from '@zc/shared/outbox';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { MessagesWorld } from './messages-fixtures.js';
import { basicAuth, filesUnder, multipart, otherRealmOwner, raw, until, upload } from './uploads-support.js';

/** Whether a delivered event has a declared schema and matches it. */
const matchesSchema = (e: unknown) => {
  const schema = clientEventSchema(e as { type: string; op?: string });
  return schema !== undefined && Value.Check(schema, e);
};

t.test('uploads', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-uploads-e2e-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sys = await startSystem(t, { uploads: { storage: { kind: 'local', dir } }, config: { maxFileUploadSizeMib: 1 } });
  const { hamlet, othello, polonius, desdemona } = sys.people;
  const w = new MessagesWorld(sys);
  t.teardown(() => w.close());
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id]);
  await w.createStream('Secret', [hamlet.user_id, desdemona.user_id], { invite_only: true });
  const db = createPool(sys.env.databaseUrl, { max: 2 });
  t.teardown(() => db.end());
  const attachmentCount = async () => Number((await db.query('SELECT count(*) AS n FROM uploads.attachment')).rows[0].n);
  const download = (uri: string, as?: typeof hamlet, host?: string) => raw(sys, 'GET', uri, { ...(as ? { as } : {}), ...(host ? { host } : {}) });
  const send = async (stream: string, content: string) => {
    const r = await sys.client(hamlet).post('/messages', { type: 'stream', to: stream, topic: 'files', content });
    if (r.status !== 200) throw new Error(`send failed: ${JSON.stringify(r.body)}`);
    return r.body.id as number;
  };

  const text = Buffer.from('To be, or not to be, that is the question.\n');
  let uri = '';
  let attachmentId = 0;

  t.test('POST /user_uploads stores the file and answers its uri', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['attachment'] });
    const r = await upload(sys, hamlet, [{ filename: 'soliloquy.txt', contentType: 'text/plain', data: text }]);
    t.equal(r.status, 200, JSON.stringify(r.json));
    t.equal(r.json.result, 'success');
    t.match(r.json.uri, new RegExp(`^/user_uploads/${sys.realmId}/[0-9a-f]{2}/[A-Za-z0-9_-]{24}/soliloquy\\.txt$`));
    t.equal(r.json.url, r.json.uri, 'url is the same as uri (Zulip 9.0 renamed it)');
    t.equal(r.json.filename, 'soliloquy.txt');
    uri = r.json.uri;

    const list = await sys.client(hamlet).get('/attachments');
    t.equal(list.status, 200);
    const [a] = list.body.attachments as Array<Record<string, unknown>>;
    t.match(a, { name: 'soliloquy.txt', path_id: uri.slice('/user_uploads/'.length), size: text.length, messages: [] });
    t.type(a?.create_time, 'number');
    t.ok(Math.abs((a?.create_time as number) - Date.now()) < 60_000, 'create_time in milliseconds');
    t.equal(list.body.upload_space_used, text.length);
    attachmentId = a?.id as number;

    const [event] = await poller.collect(1);
    t.match(event, { type: 'attachment', op: 'add', attachment: { id: attachmentId, name: 'soliloquy.txt', size: text.length, messages: [] }, upload_space_used: text.length });
    t.ok(matchesSchema(event), 'attachment/add matches its schema');
  });

  t.test('the uploader downloads it, served as a download, never run', async (t) => {
    const r = await download(uri, hamlet);
    t.equal(r.status, 200);
    t.same(r.body, text);
    t.equal(r.headers['content-type'], 'text/plain');
    t.match(r.headers['content-disposition'], /^attachment; filename="soliloquy.txt"/);
    t.equal(r.headers['x-content-type-options'], 'nosniff');
    t.match(r.headers['content-security-policy'], /sandbox/);
  });

  t.test('nobody else may download a file no message links', async (t) => {
    const r = await download(uri, othello);
    t.equal(r.status, 403);
    t.match(r.json, { result: 'error', code: 'BAD_REQUEST', msg: 'You are not authorized to view this file.' });
    const anon = await download(uri);
    t.equal(anon.status, 401, 'no credentials');
    t.match(anon.json, { result: 'error', msg: 'Not logged in: API authentication or user session required' });
  });

  let messageId = 0;
  t.test('a message linking it lets those who can read the message download it', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['attachment'] });
    messageId = await send('Denmark', `[soliloquy.txt](${uri})`);
    // As soon as the send is answered (the link is pushed to the uploads service before), not eventually.
    const first = await download(uri, othello);
    t.equal(first.status, 200, 'othello, a subscriber, may download it at once');
    t.same(first.body, text);
    const list = await sys.client(hamlet).get('/attachments');
    const [event] = await poller.collect(1);
    t.match(event, { type: 'attachment', op: 'update', attachment: { id: attachmentId, messages: [{ id: messageId }] } });
    t.ok(matchesSchema(event), 'attachment/update matches its schema');
    t.equal((await poller.drain()).length, 0, 'one update, though the link reached the uploads service twice (push and event)');
    const [a] = list.body.attachments as Array<{ messages: Array<{ id: number; date_sent: number }> }>;
    t.equal(a?.messages[0]?.id, messageId);
    t.ok(Math.abs((a?.messages[0]?.date_sent ?? 0) - Date.now()) < 60_000, 'date_sent in milliseconds');
    const msg = await sys.client(othello).get(`/messages/${messageId}`);
    t.equal(msg.status, 200);
    const narrow = await sys.client(othello).get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'has', operand: 'attachment' }] });
    t.same((narrow.body.messages as Array<{ id: number }>).map((m) => m.id), [messageId], 'has:attachment finds it');
    // A guest not subscribed to the stream cannot read the message, so not the file either.
    const guest = await download(uri, polonius);
    t.equal(guest.status, 403);
  });

  t.test('a private stream message opens the file to its subscribers only', async (t) => {
    const r = await upload(sys, hamlet, [{ filename: 'plan.txt', contentType: 'text/plain', data: Buffer.from('secret plan') }]);
    const secretUri = r.json.uri as string;
    await send('Secret', `see [the plan](${secretUri})`);
    t.equal((await download(secretUri, desdemona)).status, 200, 'a subscriber may');
    t.equal((await download(secretUri, othello)).status, 403, 'a non-subscriber may not');
  });

  t.test('nobody from another realm, whatever the path', async (t) => {
    const other = await otherRealmOwner(sys, t);
    const r = await download(uri, other.owner, other.host);
    t.equal(r.status, 404);
    t.match(r.json, { result: 'error', msg: 'File not found' });
    const ownRealmPath = uri.replace(`/user_uploads/${sys.realmId}/`, `/user_uploads/${other.realmId}/`);
    t.equal((await download(ownRealmPath, other.owner, other.host)).status, 404, 'the same path under their realm id');
  });

  t.test('malformed and traversing download paths are not found', async (t) => {
    for (const p of [
      `/user_uploads/${sys.realmId}/..%2F..%2F..%2Fetc%2Fpasswd`,
      `/user_uploads/${sys.realmId}/aa/..%2F..%2Fetc/passwd/x`,
      `/user_uploads/${sys.realmId}/aa/bb/..`,
      `/user_uploads/${sys.realmId}/.partial/x/y`,
      `/user_uploads/99999/${uri.split('/').slice(3).join('/')}`,
      `/user_uploads/abc/${uri.split('/').slice(3).join('/')}`,
    ]) {
      const r = await download(p, hamlet);
      t.equal(r.status, 404, p);
      t.equal(r.json?.msg, 'File not found', p);
    }
    // No listing: neither the realm's directory nor any prefix of a real path id names a file.
    const [, , realm, shard, random] = uri.split('/');
    for (const p of ['/user_uploads', '/user_uploads/', `/user_uploads/${realm}`, `/user_uploads/${realm}/`, `/user_uploads/${realm}/${shard}/`, `/user_uploads/${realm}/${shard}/${random}/`, `/user_uploads/thumbnail/${realm}/`]) {
      const r = await download(p, hamlet);
      t.equal(r.status, 404, `${p}: nothing listed`);
      t.equal(r.json?.result, 'error', p);
      t.notOk(r.body.toString().includes('soliloquy'), `${p}: no file named`);
    }
  });

  t.test('a temporary URL works without credentials, for a minute', async (t) => {
    const r = await sys.client(hamlet).get(uri);
    t.equal(r.status, 200, JSON.stringify(r.body));
    const url = r.body.url as string;
    t.match(url, /^\/user_uploads\/temporary\/[^/]+\/soliloquy\.txt$/);
    const got = await download(url);
    t.equal(got.status, 200);
    t.same(got.body, text);
    const forged = url.replace(/\/temporary\/([^/]+)\//, (_m, tok: string) => `/temporary/${tok.slice(0, -2)}xx/`);
    const bad = await download(forged);
    t.equal(bad.status, 403);
    t.match(bad.json, { result: 'error', msg: 'Invalid or expired link' });
    t.equal((await sys.client(othello).get(uri)).status, 200, 'othello can read the linking message');
    t.equal((await sys.client(polonius).get(uri)).status, 403);
  });

  t.test('an edit that drops the link takes the access away', async (t) => {
    const r = await sys.client(hamlet).patch(`/messages/${messageId}`, { content: 'never mind' });
    t.equal(r.status, 200, JSON.stringify(r.body));
    t.equal((await download(uri, othello)).status, 403, 'othello no longer may, as soon as the edit is answered');
    t.equal((await download(uri, hamlet)).status, 200, 'the owner still may');
    const list = await sys.client(hamlet).get('/attachments');
    t.same((list.body.attachments as Array<{ id: number; messages: unknown[] }>).find((a) => a.id === attachmentId)?.messages, []);
  });

  t.test('a late copy of an older link change does not undo a newer one', async (t) => {
    // The edit above reached the uploads service twice (push, then event). Here the send's
    // change (version 0, linking the file) arrives once more after it, then a marker change
    // of another message: once the marker shows, the stale one was handled (in order) and ignored.
    const marker = await upload(sys, hamlet, [{ filename: 'marker.txt', contentType: 'text/plain', data: Buffer.from('m') }]);
    const markerMessageId = 2_000_000_000;
    const common = { realm_id: sys.realmId, sender_id: hamlet.user_id, date_sent: Math.floor(Date.now() / 1000) };
    await addToOutbox(db, 'messages', messagesEvents.messageAttachmentsChanged, { ...common, message_id: messageId, path_ids: [uri.slice('/user_uploads/'.length)], version: 0 });
    await addToOutbox(db, 'messages', messagesEvents.messageAttachmentsChanged, { ...common, message_id: markerMessageId, path_ids: [(marker.json.uri as string).slice('/user_uploads/'.length)], version: 0 });
    await sys.flushOutboxes();
    const linksOf = async (name: string) =>
      ((await sys.client(hamlet).get('/attachments')).body.attachments as Array<{ name: string; messages: Array<{ id: number }> }>).find((a) => a.name === name)?.messages.map((m) => m.id);
    t.ok(await until(async () => (await linksOf('marker.txt'))?.[0] === markerMessageId), 'the marker change was applied');
    t.same(await linksOf('soliloquy.txt'), [], 'the stale change linked nothing');
    t.equal((await download(uri, othello)).status, 403);
  });

  t.test('DELETE /attachments/{id}: only the owner; the file is gone', async (t) => {
    const before = await attachmentCount();
    for (const [who, id] of [
      [othello, attachmentId],
      [hamlet, 999999],
      [hamlet, 'abc'],
    ] as const) {
      const r = await sys.client(who).delete(`/attachments/${id}`);
      t.equal(r.status, 400);
      t.same(r.body, { result: 'error', msg: 'Invalid attachment', code: 'BAD_REQUEST' });
    }
    t.equal(await attachmentCount(), before, 'refusals changed nothing');
    const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['attachment'] });
    const r = await sys.client(hamlet).delete(`/attachments/${attachmentId}`);
    t.same(r.body, { result: 'success', msg: '' });
    t.equal((await download(uri, hamlet)).status, 404);
    t.notOk(filesUnder(dir).some((f) => uri.endsWith(f)), 'the stored file is removed');
    const [event] = await poller.collect(1);
    t.match(event, { type: 'attachment', op: 'remove', attachment: { id: attachmentId } });
    t.ok(matchesSchema(event), 'attachment/remove matches its schema');
    t.type(event?.upload_space_used, 'number');
    const again = await sys.client(hamlet).delete(`/attachments/${attachmentId}`);
    t.equal(again.status, 400, 'a second delete');
    t.equal((await raw(sys, 'DELETE', `/api/v1/attachments/${attachmentId}`)).status, 401);
  });

  t.test('names are sanitised as Zulip does; active content is never inline', async (t) => {
    const cases: Array<[string, string]> = [
      // The directory part goes (as with Django's uploaded names), the rest is sanitised.
      ['../../etc/pass wd<script>.txt', 'pass-wdscript.txt'],
      ['..\\..\\win.ini', 'win.ini'],
      ['..', 'uploaded-file'],
      ['Ophélie  à la rivière.txt', 'Ophélie-à-la-rivière.txt'],
    ];
    for (const [given, stored] of cases) {
      const r = await upload(sys, hamlet, [{ filename: given, contentType: 'text/plain', data: Buffer.from('x') }]);
      t.equal(r.status, 200, given);
      t.equal(r.json.filename, stored, given);
      t.ok((r.json.uri as string).endsWith(`/${stored}`), `${given}: stored under the sanitised name`);
    }
    const html = await upload(sys, hamlet, [{ filename: 'page.html', contentType: 'text/html', data: Buffer.from('<script>alert(1)</script>') }]);
    const got = await download(html.json.uri, hamlet);
    t.equal(got.headers['content-type'], 'application/octet-stream');
    t.match(got.headers['content-disposition'], /^attachment;/);
    const svg = await upload(sys, hamlet, [{ filename: 'pic.svg', contentType: 'image/svg+xml', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') }]);
    t.match((await download(svg.json.uri, hamlet)).headers['content-disposition'], /^attachment;/);
    const png = await upload(sys, hamlet, [{ filename: 'pic.png', contentType: 'image/png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }]);
    const inline = await download(png.json.uri, hamlet);
    t.equal(inline.headers['content-type'], 'image/png');
    t.match(inline.headers['content-disposition'], /^inline;/);
  });

  t.test('bad uploads are refused with a clear 4xx and leave nothing', async (t) => {
    const before = await attachmentCount();
    const filesBefore = filesUnder(dir);
    const post = (body: Buffer, contentType: string, extra: Record<string, string> = {}) =>
      raw(sys, 'POST', '/api/v1/user_uploads', { as: hamlet, body, headers: { 'content-type': contentType, ...extra } });

    const empty = multipart([]);
    let r = await post(empty.body, empty.contentType);
    t.equal(r.status, 400, 'an empty multipart');
    t.same(r.json, { result: 'error', msg: 'You must specify a file to upload', code: 'BAD_REQUEST' });

    const fieldOnly = multipart([], { note: 'no file here' });
    r = await post(fieldOnly.body, fieldOnly.contentType);
    t.equal(r.json.msg, 'You must specify a file to upload', 'fields but no file');

    r = await post(Buffer.from('a=b'), 'application/x-www-form-urlencoded');
    t.equal(r.status, 400, 'not multipart at all');
    t.equal(r.json.msg, 'You must specify a file to upload');

    r = await post(Buffer.from('garbage'), 'multipart/form-data');
    t.equal(r.status, 400, 'multipart without a boundary');

    const two = multipart([
      { filename: 'a.txt', data: Buffer.from('a') },
      { filename: 'b.txt', data: Buffer.from('b') },
    ]);
    r = await post(two.body, two.contentType);
    t.equal(r.status, 400, 'two files');
    t.same(r.json, { result: 'error', msg: 'You may only upload one file at a time', code: 'BAD_REQUEST' });

    const big = multipart([{ filename: 'big.bin', data: Buffer.alloc(1024 * 1024 + 1, 7) }]);
    r = await post(big.body, big.contentType);
    t.equal(r.status, 400, 'one byte over the limit');
    t.same(r.json, { result: 'error', msg: 'Uploaded file is larger than the allowed limit of 1 MiB', code: 'BAD_REQUEST' });
    const announced = await sys.client(hamlet).post('/register', { fetch_event_types: ['realm'] });
    t.equal(announced.body.max_file_upload_size_mib, 1, '/register announces the limit that is enforced');

    const cut = multipart([{ filename: 'cut.txt', data: Buffer.alloc(200_000, 1) }]);
    r = await post(cut.body.subarray(0, cut.body.length - 100_000), cut.contentType);
    t.equal(r.status, 400, 'a body that ends inside the file');
    t.same(r.json, { result: 'error', msg: 'The upload ended before the file was complete', code: 'BAD_REQUEST' });

    t.equal(await attachmentCount(), before, 'no attachment recorded');
    t.same(filesUnder(dir), filesBefore, 'no file left, not even a partial one');
  });

  t.test('an oversize upload is refused before its body is read', async (t) => {
    // Declares 50 MiB and sends only the head: the answer must come without the rest.
    const port = Number(new URL(sys.baseUrl).port);
    const socket = net.connect(port, '127.0.0.1');
    const { contentType } = multipart([]);
    socket.write(
      `POST /api/v1/user_uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${basicAuth(hamlet)}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n--x\r\n`,
    );
    const answer = await new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (d) => {
        got += d.toString();
        if (got.includes('\r\n\r\n') && got.includes('}')) resolve(got);
      });
      socket.on('close', () => resolve(got));
      setTimeout(() => resolve(got), 5000);
    });
    socket.destroy();
    t.match(answer, /^HTTP\/1\.1 400/);
    t.match(answer, /Uploaded file is larger than the allowed limit of 1 MiB/);
  });

  t.test('a client that sends the whole oversize file before reading gets the refusal, on a connection it can reuse', async (t) => {
    // As python-zulip-api's upload_file (requests) does: the refusal comes while the file is
    // still being written, and the client reads only once all of it is sent.
    const port = Number(new URL(sys.baseUrl).port);
    const { body, contentType } = multipart([{ filename: 'big.bin', data: Buffer.alloc(6 * 1024 * 1024, 5) }]);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause();
    const write = (b: Buffer | string) => new Promise<void>((ok, fail) => socket.write(b, (e) => (e ? fail(e) : ok())));
    await write(`POST /api/v1/user_uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${basicAuth(hamlet)}\r\nContent-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`);
    for (let at = 0; at < body.length; at += 128 * 1024) await write(body.subarray(at, at + 128 * 1024));
    await write(`GET /api/v1/users/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${basicAuth(hamlet)}\r\n\r\n`);
    const received: Buffer[] = [];
    socket.on('data', (d: Buffer) => received.push(d));
    socket.resume();
    const statuses = () => Buffer.concat(received).toString('utf8').match(/HTTP\/1\.1 \d{3}/g) ?? [];
    const deadline = Date.now() + 20_000;
    while (statuses().length < 2 && Date.now() < deadline && !socket.destroyed) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    t.same(statuses(), ['HTTP/1.1 400', 'HTTP/1.1 200'], 'the refusal, then the next request answered on the same connection');
    t.match(Buffer.concat(received).toString('utf8'), /Uploaded file is larger than the allowed limit of 1 MiB/);
  });

  t.test('a client that disconnects mid-upload leaves nothing', async (t) => {
    const before = await attachmentCount();
    const filesBefore = filesUnder(dir);
    const port = Number(new URL(sys.baseUrl).port);
    const { body, contentType } = multipart([{ filename: 'gone.bin', data: Buffer.alloc(800_000, 3) }]);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /api/v1/user_uploads HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${basicAuth(hamlet)}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body.subarray(0, 400_000));
    await new Promise((r) => setTimeout(r, 300));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 500));
    t.ok(await until(async () => filesUnder(dir).length === filesBefore.length), 'the partial file is removed');
    t.same(filesUnder(dir), filesBefore);
    t.equal(await attachmentCount(), before);
  });

  t.test('unauthenticated uploads are refused before anything is read', async (t) => {
    const { body, contentType } = multipart([{ filename: 'x.txt', data: Buffer.from('x') }]);
    const r = await raw(sys, 'POST', '/api/v1/user_uploads', { body, headers: { 'content-type': contentType } });
    t.equal(r.status, 401);
  });
});

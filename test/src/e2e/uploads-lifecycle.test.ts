/**
 * The life of uploads after the upload (spec 4.20, 8): the realm's upload quota (refused early
 * from the declared length, and exactly once the bytes are in, leaving nothing either way); a
 * message deletion taking away the access it gave; and the sweeper deleting uploads no message
 * links once the grace period is over (never linked, or linked by a message since deleted),
 * with their files, thumbnails and `attachment` remove events, while linked ones stay; and a
 * send while the uploads service is down, whose links arrive by event once it is back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller } from './events-support.js';
import { MessagesWorld } from './messages-fixtures.js';
import { png } from './realm-emoji-support.js';
import { filesUnder, raw, until, upload } from './uploads-support.js';

t.test('upload quota, message deletion and the unclaimed-upload sweeper', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-uploads-lifecycle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const graceSeconds = 4;
  const sys = await startSystem(t, {
    uploads: { storage: { kind: 'local', dir }, unclaimedGraceSeconds: graceSeconds, sweepIntervalSeconds: 1 },
    config: { realmUploadQuotaMib: 1 },
  });
  const { hamlet, othello, desdemona } = sys.people;
  const w = new MessagesWorld(sys);
  t.teardown(() => w.close());
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id]);
  const uploadAs = async (filename: string, data: Buffer, contentType = 'application/octet-stream') => {
    const r = await upload(sys, hamlet, [{ filename, contentType, data }]);
    if (r.status !== 200) throw new Error(`upload failed: ${JSON.stringify(r.json)}`);
    return r.json.uri as string;
  };
  const send = async (content: string) => {
    const r = await sys.client(hamlet).post('/messages', { type: 'stream', to: 'Denmark', topic: 'files', content });
    if (r.status !== 200) throw new Error(`send failed: ${JSON.stringify(r.body)}`);
    return r.body.id as number;
  };
  const status = async (uri: string, as: typeof hamlet) => (await raw(sys, 'GET', uri, { as })).status;
  const stored = (uri: string) => filesUnder(dir).filter((f) => f.includes(uri.slice('/user_uploads/'.length)));

  t.test('the realm quota refuses an upload that would pass it, and leaves nothing', async (t) => {
    const first = await upload(sys, hamlet, [{ filename: 'a.bin', data: Buffer.alloc(700 * 1024, 1) }]);
    t.equal(first.status, 200);
    const before = filesUnder(dir).length;
    const second = await upload(sys, hamlet, [{ filename: 'b.bin', data: Buffer.alloc(400 * 1024, 2) }]);
    t.equal(second.status, 400);
    t.same(second.json, { result: 'error', msg: "Upload would exceed your organization's upload quota.", code: 'BAD_REQUEST' });
    t.equal(filesUnder(dir).length, before, 'nothing stored');
    const list = await sys.client(hamlet).get('/attachments');
    t.equal(list.body.upload_space_used, 700 * 1024);
    t.equal((list.body.attachments as unknown[]).length, 1);
    // Declared too big for what is left: refused before the body is read.
    const early = await raw(sys, 'POST', '/api/v1/user_uploads', {
      as: hamlet,
      headers: { 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(900 * 1024) },
      body: Buffer.alloc(900 * 1024, 0x2d),
    });
    t.equal(early.status, 400);
    t.equal(early.json?.msg, "Upload would exceed your organization's upload quota.");
    const id = (list.body.attachments as Array<{ id: number }>)[0]?.id;
    t.equal((await sys.client(hamlet).delete(`/attachments/${id}`)).status, 200, 'space is freed by deleting');
    t.equal((await upload(sys, hamlet, [{ filename: 'b.bin', data: Buffer.alloc(400 * 1024, 2) }])).status, 200);
  });

  t.test('deleting the linking message takes away the access it gave; the sweeper then deletes the upload', async (t) => {
    const { poller } = await QueuePoller.register(sys.client(hamlet), { event_types: ['attachment'] });
    const orphan = await uploadAs('never-linked.txt', Buffer.from('nobody links me'));
    const kept = await uploadAs('kept.txt', Buffer.from('linked for good'));
    const dropped = await uploadAs('dropped.png', await png(40, 40), 'image/png');
    t.equal(stored(dropped).length, 2, 'the image and its thumbnail are stored');
    await send(`[kept](${kept})`);
    const messageId = await send(`[dropped](${dropped})`);
    t.ok(await until(async () => (await status(dropped, othello)) === 200), 'othello may read it while the message exists');

    t.equal((await sys.client(desdemona).delete(`/messages/${messageId}`)).status, 200);
    t.ok(await until(async () => (await status(dropped, othello)) === 403), 'not once the message is gone');
    t.equal(await status(dropped, hamlet), 200, 'the uploader still may, until the sweep');

    t.ok(await until(async () => (await status(orphan, hamlet)) === 404 && (await status(dropped, hamlet)) === 404, (graceSeconds + 8) * 1000), 'both swept after the grace period');
    // Rows go first (the 404), their objects right after the commit.
    t.ok(await until(async () => [...stored(orphan), ...stored(dropped)].length === 0), 'their files and the thumbnail are removed');
    t.equal(await status(kept, othello), 200, 'a linked upload stays');
    t.equal(stored(kept).length, 1);
    const names = ((await sys.client(hamlet).get('/attachments')).body.attachments as Array<{ name: string }>).map((a) => a.name);
    t.notOk(names.includes('never-linked.txt') || names.includes('dropped.png'), 'gone from GET /attachments');
    // Three adds, two links, the unlink by the deletion, and removes (b.bin of the quota test is swept too).
    const events = (await poller.collect(9)) as unknown as Array<{ op: string; attachment: { id: number; path_id?: string } }>;
    const idOf = (uri: string) => events.find((e) => e.op === 'add' && `/user_uploads/${e.attachment.path_id}` === uri)?.attachment.id;
    const removed = events.filter((e) => e.op === 'remove').map((e) => e.attachment.id);
    t.ok(removed.includes(idOf(orphan) ?? -1) && removed.includes(idOf(dropped) ?? -1), 'an attachment remove event for each swept upload');
    t.notOk(removed.includes(idOf(kept) ?? -1), 'none for the linked one');
  });
});

t.test('with the uploads service down, a send linking a file still succeeds, and the link follows by event', async (t) => {
  // A system of its own: no sweeper, which might take the file while it waits for its link.
  const sys = await startSystem(t);
  const { hamlet, othello } = sys.people;
  const w = new MessagesWorld(sys);
  t.teardown(() => w.close());
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id]);
  const up = await upload(sys, hamlet, [{ filename: 'later.txt', contentType: 'text/plain', data: Buffer.from('shared once the service is back') }]);
  const uri = up.json.uri as string;
  await sys.stopService('uploads');
  // The push before the answer fails; the send does not.
  const sent = await sys.client(hamlet).post('/messages', { type: 'stream', to: 'Denmark', topic: 'files', content: `[later](${uri})` });
  t.equal(sent.status, 200, JSON.stringify(sent.body));
  await sys.startReplica('uploads');
  t.ok(await until(async () => (await raw(sys, 'GET', uri, { as: othello })).status === 200), 'othello may download it once the event is consumed');
  const list = await sys.client(hamlet).get('/attachments');
  t.same((list.body.attachments as Array<{ name: string; messages: Array<{ id: number }> }>).find((a) => a.name === 'later.txt')?.messages.map((m) => m.id), [sent.body.id]);
});

/**
 * Uploads on the S3-compatible backend, end to end against a real S3 server (s3rver): an
 * upload larger than one multipart part, downloads streamed through the gateway or
 * redirected to a signed URL, the access rule before the redirect, deletion removing
 * the object from the bucket, an image's thumbnail stored, served and deleted with it, and
 * refused (oversize) or truncated uploads leaving no object.
 */
import { randomBytes } from 'node:crypto';
import { S3Client, ListObjectsV2Command } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import t from 'tap';
import { startSystem } from '../harness.js';
import { startTestS3 } from '../s3-server.js';
import { png } from './realm-emoji-support.js';
import { multipart, raw, upload } from './uploads-support.js';

for (const redirectDownloads of [false, true]) {
  t.test(`S3 backend, downloads ${redirectDownloads ? 'redirected to signed URLs' : 'streamed through the gateway'}`, async (t) => {
    const s3 = await startTestS3(t);
    const sys = await startSystem(t, {
      uploads: { storage: { kind: 's3', bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, redirectDownloads, signedUrlTtlSeconds: 60 } },
    });
    const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
    t.teardown(() => client.destroy());
    const objects = async () => (await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents?.map((o) => o.Key) ?? [];
    const { hamlet, othello } = sys.people;

    // Larger than one 5 MiB part: the SDK's multipart upload, fed as the body streams in.
    const data = randomBytes(6 * 1024 * 1024 + 123);
    const up = await upload(sys, hamlet, [{ filename: 'big data.bin', data }]);
    t.equal(up.status, 200, JSON.stringify(up.json));
    const uri = up.json.uri as string;
    t.same(await objects(), [uri.slice('/user_uploads/'.length)], 'stored under its path id');

    const got = await raw(sys, 'GET', uri, { as: hamlet });
    if (redirectDownloads) {
      t.equal(got.status, 302);
      const location = got.headers.location as string;
      t.ok(location.startsWith(s3.endpoint), 'to the object store');
      const direct = await fetch(location);
      t.equal(direct.status, 200);
      t.same(Buffer.from(await direct.arrayBuffer()), data);
      t.match(direct.headers.get('content-disposition'), /^attachment; filename="big-data.bin"/);
    } else {
      t.equal(got.status, 200);
      t.same(got.body, data);
      t.equal(got.headers['content-length'], String(data.length));
      t.match(got.headers['content-disposition'], /^attachment; filename="big-data.bin"/);
    }

    const denied = await raw(sys, 'GET', uri, { as: othello });
    t.equal(denied.status, 403, 'the access rule comes before any redirect');
    t.equal(denied.headers.location, undefined);

    const list = await sys.client(hamlet).get('/attachments');
    const id = (list.body.attachments as Array<{ id: number }>)[0]?.id;
    t.equal(list.body.upload_space_used, data.length);
    t.equal((await sys.client(hamlet).delete(`/attachments/${id}`)).status, 200);
    t.same(await objects(), [], 'the object is gone from the bucket');
    t.equal((await raw(sys, 'GET', uri, { as: hamlet })).status, 404);

    // An image: its thumbnail is stored beside it, served (or redirected to) under the file's rule, deleted with it.
    const image = await upload(sys, hamlet, [{ filename: 'castle.png', contentType: 'image/png', data: await png(1200, 900) }]);
    const imagePath = (image.json.uri as string).slice('/user_uploads/'.length);
    const thumbnailKey = `thumbnail/${imagePath}/840x560.webp`;
    t.same((await objects()).sort(), [imagePath, thumbnailKey].sort(), 'the thumbnail is in the bucket');
    const thumb = await raw(sys, 'GET', `/user_uploads/${thumbnailKey}`, { as: hamlet });
    t.equal(thumb.status, redirectDownloads ? 302 : 200);
    const thumbBody = redirectDownloads ? Buffer.from(await (await fetch(thumb.headers.location as string)).arrayBuffer()) : thumb.body;
    t.match(await sharp(thumbBody).metadata(), { format: 'webp', width: 747, height: 560 });
    t.equal((await raw(sys, 'GET', `/user_uploads/${thumbnailKey}`, { as: othello })).status, 403, 'the file\'s access rule');
    const imageId = ((await sys.client(hamlet).get('/attachments')).body.attachments as Array<{ id: number; path_id: string }>).find((a) => a.path_id === imagePath)?.id;
    t.equal((await sys.client(hamlet).delete(`/attachments/${imageId}`)).status, 200);
    t.same(await objects(), [], 'the image and its thumbnail are gone from the bucket');

    const tooBig = await upload(sys, hamlet, [{ filename: 'x.bin', data: Buffer.alloc(26 * 1024 * 1024, 1) }]);
    t.equal(tooBig.status, 400);
    t.same(await objects(), [], 'a refused upload leaves no object');

    // A body that ends inside the file, past the first multipart part: the SDK's upload is aborted.
    const cut = multipart([{ filename: 'cut.bin', data: randomBytes(7 * 1024 * 1024) }]);
    const truncated = await raw(sys, 'POST', '/api/v1/user_uploads', { as: hamlet, body: cut.body.subarray(0, 6 * 1024 * 1024), headers: { 'content-type': cut.contentType } });
    t.equal(truncated.status, 400);
    t.same(truncated.json, { result: 'error', msg: 'The upload ended before the file was complete', code: 'BAD_REQUEST' });
    t.same(await objects(), [], 'a truncated upload leaves no object');
    t.same(((await sys.client(hamlet).get('/attachments')).body.attachments as unknown[]).length, 0, 'and no attachment');
  });
}

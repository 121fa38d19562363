import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import t from 'tap';
import { Readable } from 'node:stream';
import { S3Storage } from '../../src/storage/s3.js';
import { startTestS3 } from './s3-server.js';
import { storageContract } from './storage-contract.js';

t.test('S3-compatible storage against a real S3 server', async (t) => {
  const s3 = await startTestS3(t);
  const storage = new S3Storage({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, redirectDownloads: true });
  t.teardown(() => storage.client.destroy());
  const count = async () => (await storage.client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).KeyCount ?? 0;
  t.ok(await storage.check(), 'the bucket answers');
  await storageContract(t, storage, count);

  t.test('a signed URL serves the object with the headers asked for, and only until it expires', async (t) => {
    await storage.write('1/ab/signed/page.html', Readable.from([Buffer.from('<b>hi</b>')]), 'text/html');
    const url = await storage.signedDownloadUrl('1/ab/signed/page.html', { ttlSeconds: 60, contentType: 'application/octet-stream', contentDisposition: 'attachment; filename="page.html"' });
    t.ok(url);
    const res = await fetch(url as string);
    t.equal(res.status, 200);
    t.equal(await res.text(), '<b>hi</b>');
    t.equal(res.headers.get('content-type'), 'application/octet-stream');
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="page.html"');
    const tampered = (url as string).replace('page.html', 'other.html');
    t.not((await fetch(tampered)).status, 200, 'a URL for another key is refused');
  });

  t.test('refuses unsafe keys', async (t) => {
    await t.rejects(storage.write('../x', Readable.from([Buffer.from('x')]), 'text/plain'));
  });

  t.test('no signed URLs when downloads stream through us', async (t) => {
    const streaming = new S3Storage({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, redirectDownloads: false });
    t.teardown(() => streaming.client.destroy());
    t.equal(await streaming.signedDownloadUrl('1/ab/x/y', { ttlSeconds: 60, contentType: 'text/plain', contentDisposition: 'attachment' }), undefined);
  });
});

/**
 * Custom emoji on the S3-compatible backend (a real s3rver): the upload stores the original,
 * the resized image and (animated) the still under avatars/<realm>/emoji/images/, the public
 * image URL redirects to a signed URL of the object, a refused image leaves no object, and
 * deactivation keeps the images. Short on purpose: the S3 test files are among the slowest.
 */
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import sharp from 'sharp';
import t from 'tap';
import { startSystem } from '../harness.js';
import { startTestS3 } from '../s3-server.js';
import { animatedGif, imageFile, postEmoji } from './realm-emoji-support.js';
import { raw } from './uploads-support.js';

t.test('custom emoji on the S3 backend', async (t) => {
  const s3 = await startTestS3(t);
  const sys = await startSystem(t, {
    only: ['users', 'uploads', 'events', 'gateway'],
    uploads: { storage: { kind: 's3', bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, redirectDownloads: true, signedUrlTtlSeconds: 60 } },
  });
  const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true });
  t.teardown(() => client.destroy());
  const objects = async () => ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents?.map((o) => o.Key ?? '') ?? []).sort();
  const { hamlet } = sys.people;

  const refused = await postEmoji(sys, hamlet, 'zc_text', [imageFile(Buffer.from('not an image at all'), 'x.png')]);
  t.equal(refused.status, 400);
  t.equal(refused.json.msg, 'Could not decode image; did you upload an image file?');
  t.same(await objects(), [], 'a refused image leaves no object');

  const r = await postEmoji(sys, hamlet, 'zc_spinner', [imageFile(await animatedGif(90, 90), 'spin.gif')]);
  t.equal(r.status, 200, JSON.stringify(r.json));
  const emoji = Object.values((await sys.client(hamlet).get('/realm/emoji')).body.emoji as Record<string, { id: string; source_url: string; still_url: string }>)[0];
  const id = emoji?.id as string;
  const dir = `avatars/${sys.realmId}/emoji/images`;
  t.same(await objects(), [`${dir}/${id}.gif`, `${dir}/${id}.gif.original`, `${dir}/still/${id}.png`]);

  const redirect = await raw(sys, 'GET', emoji?.source_url as string);
  t.equal(redirect.status, 302, 'the public URL redirects to the object store');
  const image = await fetch(redirect.headers.location as string);
  t.equal(image.status, 200);
  const meta = await sharp(Buffer.from(await image.arrayBuffer()), { animated: true }).metadata();
  t.same([meta.format, meta.width, meta.pageHeight, meta.pages], ['gif', 64, 64, 3]);

  t.equal((await sys.client(hamlet).delete('/realm/emoji/zc_spinner')).status, 200);
  t.equal((await objects()).length, 3, 'deactivation keeps the images (old messages show them)');
});

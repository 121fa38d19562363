/**
 * S3-compatible object storage through the AWS SDK v3 (AWS itself, MinIO, Ceph, ...).
 * Credentials come from the SDK's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
 * profiles, instance roles). Uploads go as multipart uploads of bounded parts, so memory per
 * upload is a few parts whatever the size; a failed body aborts the multipart upload, and
 * S3 never shows an object that was not completed.
 */
import { DeleteObjectCommand, DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, NoSuchKey, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { Readable } from 'node:stream';
import { assertSafeKey, type FileStorage } from './file-storage.js';

export interface S3Options {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  redirectDownloads: boolean;
}

// S3's smallest part size; with two in flight an upload holds about 10 MiB at most.
const PART_SIZE = 5 * 1024 * 1024;

export class S3Storage implements FileStorage {
  readonly client: S3Client;

  constructor(private readonly opts: S3Options) {
    this.client = new S3Client({
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    });
  }

  async write(key: string, body: Readable, contentType: string): Promise<void> {
    assertSafeKey(key);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.opts.bucket, Key: key, Body: body, ContentType: contentType },
      partSize: PART_SIZE,
      queueSize: 2,
      leavePartsOnError: false,
    });
    // The SDK reads the body itself; a body that fails must fail the upload.
    const failed = new Promise<never>((_resolve, reject) => body.once('error', reject));
    try {
      await Promise.race([upload.done(), failed]);
    } catch (e) {
      await upload.abort().catch(() => undefined);
      // A small object may have been sent whole before the failure showed.
      await this.remove(key).catch(() => undefined);
      throw e;
    }
  }

  async read(key: string) {
    assertSafeKey(key);
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.opts.bucket, Key: key }));
      if (!(out.Body instanceof Readable)) throw new Error('S3 answered without a body stream');
      return { body: out.Body, size: out.ContentLength ?? 0 };
    } catch (e) {
      if (e instanceof NoSuchKey || (e as { name?: string }).name === 'NoSuchKey') return undefined;
      throw e;
    }
  }

  async remove(key: string): Promise<void> {
    assertSafeKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: key }));
  }

  async removeUnder(prefix: string): Promise<number> {
    assertSafeKey(prefix);
    let removed = 0;
    // Each listing starts afresh: the page just deleted is gone from it, and a key whose
    // deletion failed stops the loop (by throwing) rather than being listed forever.
    for (;;) {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.opts.bucket, Prefix: `${prefix}/`, MaxKeys: 1000 }));
      const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
      if (keys.length === 0) return removed;
      const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.opts.bucket, Delete: { Objects: keys, Quiet: true } }));
      const failed = out.Errors ?? [];
      if (failed.length) throw new Error(`S3 refused to delete ${failed.length} objects under ${prefix}/, e.g. ${failed[0]?.Key}: ${failed[0]?.Code} ${failed[0]?.Message}`);
      removed += keys.length;
    }
  }

  async signedDownloadUrl(key: string, o: { ttlSeconds: number; contentType: string; contentDisposition: string }): Promise<string | undefined> {
    if (!this.opts.redirectDownloads) return undefined;
    assertSafeKey(key);
    const command = new GetObjectCommand({
      Bucket: this.opts.bucket,
      Key: key,
      ResponseContentType: o.contentType,
      ResponseContentDisposition: o.contentDisposition,
    });
    return getSignedUrl(this.client, command, { expiresIn: o.ttlSeconds });
  }

  async check(): Promise<boolean> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.opts.bucket }));
    return true;
  }

  close(): void {
    this.client.destroy();
  }
}

/**
 * The uploads service's own settings, read from the environment once and validated (a bad
 * value stops the service at start, never a NaN at run time). README lists them.
 */
import path from 'node:path';
import { ConfigError, readEnv } from '@zc/shared/config';

export type StorageSettings =
  | { kind: 'local'; dir: string }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      /** For S3-compatible servers (MinIO, Ceph, ...); absent for AWS itself. */
      endpoint?: string;
      forcePathStyle: boolean;
      /** Downloads redirect to a short-lived signed URL instead of streaming through us. */
      redirectDownloads: boolean;
      /** Seconds a signed download URL stays valid. */
      signedUrlTtlSeconds: number;
    };

export interface UploadsSettings {
  /** Zulip's MAX_FILE_UPLOAD_SIZE, from the shared config (ZC_MAX_FILE_UPLOAD_SIZE_MIB), which /register announces too. */
  maxFileUploadSizeMib: number;
  /** A realm's total upload space, from the shared config (ZC_REALM_UPLOAD_QUOTA_MIB); null: unlimited. */
  realmQuotaMib: number | null;
  /** Zulip's MAX_EMOJI_FILE_SIZE_MIB (5). */
  maxEmojiFileSizeMib: number;
  /** Images with more pixels than this (every frame counted) are refused before decoding. */
  imageMaxPixels: number;
  /** Seconds one image may take to process. */
  imageTimeoutSeconds: number;
  /** Port and address of the internal HTTP listener the gateway streams files through; port 0 picks one. */
  httpPort: number;
  httpHost: string;
  /** How the gateway reaches this replica, e.g. `http://10.0.0.7:9300`; default from httpHost and the bound port. */
  advertiseUrl: string | undefined;
  /** Uploads no message links are deleted this long after upload (Zulip: a few weeks). */
  unclaimedGraceSeconds: number;
  /** How often the sweeper looks for them; 0 switches it off. */
  sweepIntervalSeconds: number;
  storage: StorageSettings;
}

/** The uploads service's settings from the checked environment (@zc/shared/config's schema); the upload size and quota come from the shared config. */
export function loadUploadsSettings(shared: { maxFileUploadSizeMib: number; realmUploadQuotaMib: number | null }, env: NodeJS.ProcessEnv = process.env): UploadsSettings {
  const e = readEnv(env);
  let storage: StorageSettings;
  if (e.ZC_UPLOADS_BACKEND === 'local') {
    storage = { kind: 'local', dir: path.resolve(e.ZC_UPLOADS_DIR) };
  } else {
    const bucket = e.ZC_S3_BUCKET;
    if (!bucket) throw new ConfigError([{ variable: 'ZC_S3_BUCKET', message: 'is required with ZC_UPLOADS_BACKEND=s3' }]);
    storage = {
      kind: 's3',
      bucket,
      region: e.ZC_S3_REGION ?? (env.AWS_REGION || 'us-east-1'),
      ...(e.ZC_S3_ENDPOINT ? { endpoint: e.ZC_S3_ENDPOINT } : {}),
      forcePathStyle: e.ZC_S3_FORCE_PATH_STYLE,
      redirectDownloads: e.ZC_S3_REDIRECT_DOWNLOADS,
      signedUrlTtlSeconds: e.ZC_S3_SIGNED_URL_TTL_SECONDS,
    };
  }
  return {
    maxFileUploadSizeMib: shared.maxFileUploadSizeMib,
    realmQuotaMib: shared.realmUploadQuotaMib,
    maxEmojiFileSizeMib: e.ZC_MAX_EMOJI_FILE_SIZE_MIB,
    imageMaxPixels: e.ZC_IMAGE_MAX_PIXELS,
    imageTimeoutSeconds: e.ZC_IMAGE_TIMEOUT_SECONDS,
    httpPort: e.ZC_UPLOADS_HTTP_PORT,
    httpHost: e.ZC_UPLOADS_HTTP_HOST,
    advertiseUrl: e.ZC_UPLOADS_ADVERTISE_URL,
    unclaimedGraceSeconds: e.ZC_UNCLAIMED_UPLOAD_GRACE_DAYS * 86_400,
    sweepIntervalSeconds: e.ZC_UPLOAD_SWEEP_INTERVAL_SECONDS,
    storage,
  };
}

/**
 * The uploads service's own settings, read from the environment once and validated (a bad
 * value stops the service at start, never a NaN at run time). README lists them.
 */
import path from 'node:path';

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

function num(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min}, got ${JSON.stringify(v)}`);
  return n;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (/^(1|true|yes)$/i.test(v)) return true;
  if (/^(0|false|no)$/i.test(v)) return false;
  throw new Error(`${name} must be true or false, got ${JSON.stringify(v)}`);
}

/** The settings from the environment; the upload size and quota come from the shared config. */
export function loadUploadsSettings(shared: { maxFileUploadSizeMib: number; realmUploadQuotaMib: number | null }, env: NodeJS.ProcessEnv = process.env): UploadsSettings {
  const backend = env.ZC_UPLOADS_BACKEND || 'local';
  let storage: StorageSettings;
  if (backend === 'local') {
    storage = { kind: 'local', dir: path.resolve(env.ZC_UPLOADS_DIR || 'var/uploads') };
  } else if (backend === 's3') {
    const bucket = env.ZC_S3_BUCKET;
    if (!bucket) throw new Error('ZC_S3_BUCKET is required with ZC_UPLOADS_BACKEND=s3');
    storage = {
      kind: 's3',
      bucket,
      region: env.ZC_S3_REGION || env.AWS_REGION || 'us-east-1',
      ...(env.ZC_S3_ENDPOINT ? { endpoint: env.ZC_S3_ENDPOINT } : {}),
      forcePathStyle: flag(env, 'ZC_S3_FORCE_PATH_STYLE', false),
      redirectDownloads: flag(env, 'ZC_S3_REDIRECT_DOWNLOADS', false),
      signedUrlTtlSeconds: num(env, 'ZC_S3_SIGNED_URL_TTL_SECONDS', 60, 1),
    };
  } else {
    throw new Error(`ZC_UPLOADS_BACKEND must be local or s3, got ${JSON.stringify(backend)}`);
  }
  return {
    maxFileUploadSizeMib: shared.maxFileUploadSizeMib,
    realmQuotaMib: shared.realmUploadQuotaMib,
    maxEmojiFileSizeMib: num(env, 'ZC_MAX_EMOJI_FILE_SIZE_MIB', 5, 0),
    imageMaxPixels: num(env, 'ZC_IMAGE_MAX_PIXELS', 25_000_000, 1),
    imageTimeoutSeconds: num(env, 'ZC_IMAGE_TIMEOUT_SECONDS', 10, 1),
    httpPort: num(env, 'ZC_UPLOADS_HTTP_PORT', 0, 0),
    httpHost: env.ZC_UPLOADS_HTTP_HOST || '127.0.0.1',
    advertiseUrl: env.ZC_UPLOADS_ADVERTISE_URL || undefined,
    unclaimedGraceSeconds: num(env, 'ZC_UNCLAIMED_UPLOAD_GRACE_DAYS', 21, 0) * 86_400,
    sweepIntervalSeconds: num(env, 'ZC_UPLOAD_SWEEP_INTERVAL_SECONDS', 3600, 0),
    storage,
  };
}

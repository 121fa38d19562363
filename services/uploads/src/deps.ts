import type { Bus } from '@zc/shared/bus';
import { Directory } from '@zc/shared/directory';
import type { Pool } from '@zc/shared/db';
import type { Logger } from '@zc/shared/logging';
import { ConcurrencyLimit } from './lib/concurrency-limit.js';
import { tokenKey, type TokenKey } from './lib/tokens.js';
import type { UploadsSettings } from './settings.js';
import type { FileStorage } from './storage/index.js';
import { attachmentStore, type AttachmentStore } from './store/attachment-store.js';
import { realmEmojiStore } from './store/realm-emoji-store.js';

/** Everything the uploads service's actions and queries need, built once at start. */
export interface UploadsDeps {
  pool: Pool;
  bus: Bus;
  log: Logger;
  store: AttachmentStore;
  emojiStore: typeof realmEmojiStore;
  /** This service's copy of the realms and users (schema `uploads`): emoji permissions and event recipients. */
  directory: Directory;
  storage: FileStorage;
  settings: UploadsSettings;
  /** One key per token purpose: an upload grant, an internal download, a client's temporary URL, an emoji upload, an emoji image. */
  keys: { upload: TokenKey; download: TokenKey; temporary: TokenKey; emojiUpload: TokenKey; emojiImage: TokenKey };
  /** How many images this replica thumbnails at once (each holds its file in memory). */
  thumbnailSlots: ConcurrencyLimit;
  /** Base URL of this replica's internal HTTP listener (set once it listens). */
  internalUrl: string;
  /** Seconds since the epoch; tests may fix it. */
  now(): number;
}

/** Two at a time: about two files' worth of memory, and the other core left to requests. */
const THUMBNAIL_CONCURRENCY = 2;

export function makeDeps(p: { pool: Pool; bus: Bus; log: Logger; storage: FileStorage; settings: UploadsSettings; secretKey: string; now?: () => number }): UploadsDeps {
  return {
    pool: p.pool,
    bus: p.bus,
    log: p.log,
    storage: p.storage,
    settings: p.settings,
    store: attachmentStore,
    emojiStore: realmEmojiStore,
    directory: new Directory({ schema: 'uploads', pool: p.pool, bus: p.bus }),
    keys: {
      upload: tokenKey(p.secretKey, 'upload'),
      download: tokenKey(p.secretKey, 'download'),
      temporary: tokenKey(p.secretKey, 'temporary'),
      emojiUpload: tokenKey(p.secretKey, 'emoji-upload'),
      emojiImage: tokenKey(p.secretKey, 'emoji-image'),
    },
    thumbnailSlots: new ConcurrencyLimit(THUMBNAIL_CONCURRENCY),
    internalUrl: '',
    now: p.now ?? (() => Date.now() / 1000),
  };
}

/** Picks the storage backend the settings name. */
import type { StorageSettings } from '../settings.js';
import type { FileStorage } from './file-storage.js';
import { LocalDiskStorage } from './local-disk.js';
import { S3Storage } from './s3.js';

export type { FileStorage, StoredObject } from './file-storage.js';

export function createStorage(s: StorageSettings): FileStorage {
  return s.kind === 'local' ? new LocalDiskStorage(s.dir) : new S3Storage(s);
}

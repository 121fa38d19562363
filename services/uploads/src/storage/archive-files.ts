/**
 * The uploads storage as the realm commands of @zc/shared/admin see it: whole files as
 * buffers for export and import (exports are JSON documents, so the files they carry are held
 * in memory anyway), and every file of a realm at once for its deletion.
 */
import { Readable } from 'node:stream';
import { realmStoragePrefixes } from '../lib/file-names.js';
import type { StorageSettings } from '../settings.js';
import { createStorage } from './index.js';

export interface RealmFiles {
  read(key: string): Promise<Buffer | undefined>;
  write(key: string, body: Buffer, contentType: string): Promise<void>;
  /** Removes every stored file of the realm (uploads, thumbnails, emoji); how many there were. */
  removeRealm(realmId: number): Promise<number>;
  close(): void;
}

export function archiveFiles(settings: StorageSettings): RealmFiles {
  const storage = createStorage(settings);
  return {
    async read(key) {
      const obj = await storage.read(key);
      if (!obj) return undefined;
      const chunks: Buffer[] = [];
      for await (const c of obj.body) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    },
    write: (key, body, contentType) => storage.write(key, Readable.from([body]), contentType),
    async removeRealm(realmId) {
      let removed = 0;
      for (const prefix of realmStoragePrefixes(realmId)) removed += await storage.removeUnder(prefix);
      return removed;
    },
    close: () => storage.close(),
  };
}

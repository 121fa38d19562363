/**
 * The uploads storage as realm export/import (@zc/shared/admin) sees it: whole files as
 * buffers. Exports are JSON documents, so the files they carry are held in memory anyway.
 */
import { Readable } from 'node:stream';
import type { StorageSettings } from '../settings.js';
import { createStorage } from './index.js';

export function archiveFiles(settings: StorageSettings): { read(key: string): Promise<Buffer | undefined>; write(key: string, body: Buffer, contentType: string): Promise<void>; close(): void } {
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
    close: () => storage.close(),
  };
}

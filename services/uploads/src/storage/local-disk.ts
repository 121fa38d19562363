/**
 * Local-disk storage: one file per key under a root directory. A write goes to a temporary
 * file beside the root and is renamed into place only when complete, so a reader never sees
 * a partial file and a failed upload leaves nothing. Several replicas may share the root
 * (a ReadWriteMany volume): rename is atomic within one filesystem.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertSafeKey, type FileStorage } from './file-storage.js';

const isMissing = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ENOENT';

export class LocalDiskStorage implements FileStorage {
  private readonly root: string;
  private readonly tmp: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
    this.tmp = path.join(this.root, '.partial');
  }

  private pathOf(key: string): string {
    assertSafeKey(key);
    const p = path.resolve(this.root, key);
    if (!p.startsWith(this.root + path.sep) || p === this.tmp || p.startsWith(this.tmp + path.sep)) throw new Error(`storage key outside the root: ${key}`);
    return p;
  }

  async write(key: string, body: Readable, _contentType?: string): Promise<void> {
    const target = this.pathOf(key);
    // The body may fail before the pipeline below listens; the pipeline still sees it destroyed.
    body.on('error', () => undefined);
    await fs.mkdir(this.tmp, { recursive: true });
    const partial = path.join(this.tmp, randomBytes(12).toString('hex'));
    try {
      await pipeline(body, createWriteStream(partial, { flags: 'wx', mode: 0o640 }));
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.rename(partial, target);
    } catch (e) {
      await fs.rm(partial, { force: true });
      throw e;
    }
  }

  async read(key: string) {
    const p = this.pathOf(key);
    try {
      const handle = await fs.open(p, 'r');
      const { size } = await handle.stat();
      return { body: createReadStream('', { fd: handle }), size };
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
  }

  async remove(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
    // Empty parent directories go too, up to (not including) the realm's directory.
    let dir = path.dirname(this.pathOf(key));
    for (let i = 0; i < 2; i++) {
      try {
        await fs.rmdir(dir);
      } catch {
        break;
      }
      dir = path.dirname(dir);
    }
  }

  async removeUnder(prefix: string): Promise<number> {
    const dir = this.pathOf(prefix);
    let files = 0;
    try {
      for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) if (!entry.isDirectory()) files++;
    } catch (e) {
      if (isMissing(e)) return 0;
      throw e;
    }
    await fs.rm(dir, { recursive: true, force: true });
    return files;
  }

  async signedDownloadUrl(): Promise<undefined> {
    return undefined;
  }

  async check(): Promise<boolean> {
    await fs.mkdir(this.tmp, { recursive: true });
    await fs.access(this.tmp, fs.constants.W_OK);
    return true;
  }

  close(): void {
    // Nothing held open.
  }
}

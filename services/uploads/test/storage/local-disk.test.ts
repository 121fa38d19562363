import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import t from 'tap';
import { LocalDiskStorage } from '../../src/storage/local-disk.js';
import { storageContract } from './storage-contract.js';

t.test('local disk storage', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'zc-local-storage-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const storage = new LocalDiskStorage(dir);
  await storageContract(t, storage, () => readdirSync(dir, { recursive: true }).filter((f) => !String(f).startsWith('.partial') || String(f).length > '.partial'.length).length);

  t.test('refuses keys that leave the root', async (t) => {
    for (const key of ['../x', '1/../../x', '/etc/passwd', '1//x', '.partial/x', '']) {
      await t.rejects(storage.write(key, Readable.from([Buffer.from('x')]), 'text/plain'), key);
    }
    await t.rejects(storage.removeUnder('.partial'), 'nor may a removal take the writes in progress');
  });

  t.test('a reader never sees a file being written', async (t) => {
    const body = new PassThrough();
    const writing = storage.write('1/aa/bb/slow.txt', body);
    body.write('first half ');
    await new Promise((r) => setTimeout(r, 20));
    t.equal(await storage.read('1/aa/bb/slow.txt'), undefined);
    body.end('second half');
    await writing;
    const got = await storage.read('1/aa/bb/slow.txt');
    t.equal(got && (await text(got.body)), 'first half second half');
  });
});

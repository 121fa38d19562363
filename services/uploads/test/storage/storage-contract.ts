/** The behaviour every storage backend must have, run against each real backend. */
import { PassThrough, Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import type { Test } from 'tap';
import type { FileStorage } from '../../src/storage/index.js';

export async function storageContract(t: Test, storage: FileStorage, objectCount: () => number | Promise<number>): Promise<void> {
  t.test('writes, reads back and removes an object', async (t) => {
    const data = Buffer.from('hello storage');
    await storage.write('1/ab/key-one/hello.txt', Readable.from([data]), 'text/plain');
    const got = await storage.read('1/ab/key-one/hello.txt');
    t.ok(got);
    t.equal(got?.size, data.length);
    t.same(got && (await buffer(got.body)), data);
    await storage.remove('1/ab/key-one/hello.txt');
    t.equal(await storage.read('1/ab/key-one/hello.txt'), undefined);
    await storage.remove('1/ab/key-one/hello.txt');
    t.pass('removing a missing object is not an error');
  });

  t.test('a large object streams through in bounded memory', async (t) => {
    const chunk = Buffer.alloc(1024 * 1024, 5);
    const body = Readable.from((function* () {
      for (let i = 0; i < 12; i++) yield chunk;
    })());
    await storage.write('1/ab/key-two/big.bin', body, 'application/octet-stream');
    const got = await storage.read('1/ab/key-two/big.bin');
    t.equal(got?.size, 12 * 1024 * 1024);
    let n = 0;
    for await (const c of got!.body) n += (c as Buffer).length;
    t.equal(n, 12 * 1024 * 1024);
    await storage.remove('1/ab/key-two/big.bin');
  });

  t.test('a body that fails leaves nothing under its key', async (t) => {
    const before = await objectCount();
    const body = new PassThrough();
    const writing = storage.write('1/ab/key-three/broken.bin', body, 'application/octet-stream');
    body.write(Buffer.alloc(6 * 1024 * 1024, 1));
    setTimeout(() => body.destroy(new Error('client went away')), 50);
    await t.rejects(writing);
    t.equal(await storage.read('1/ab/key-three/broken.bin'), undefined);
    t.equal(await objectCount(), before, 'no partial object either');
  });

  t.test('removeUnder removes every object under a prefix, and only those', async (t) => {
    const put = (key: string) => storage.write(key, Readable.from([Buffer.from(key)]), 'text/plain');
    const doomed = ['7/aa/one/a.txt', '7/bb/two/b.txt', 'thumbnail/7/aa/one/a.txt/840x560.webp'];
    const kept = ['70/aa/one/a.txt', '8/aa/one/7.txt', 'thumbnail/70/aa/x/y.txt/840x560.webp'];
    for (const key of [...doomed, ...kept]) await put(key);
    t.equal(await storage.removeUnder('7'), 2, 'the two under 7/');
    t.equal(await storage.removeUnder('thumbnail/7'), 1);
    for (const key of doomed) t.equal(await storage.read(key), undefined, `${key} gone`);
    for (const key of kept) t.ok(await storage.read(key), `${key} kept (7 is not 70, nor a name)`);
    t.equal(await storage.removeUnder('7'), 0, 'again: nothing left, no error');
    t.equal(await storage.removeUnder('nothing-here'), 0);
    await t.rejects(storage.removeUnder('..'), 'a prefix leaving the root is refused');
    for (const key of kept) await storage.remove(key);
  });

  t.test('reading a missing object answers undefined', async (t) => {
    t.equal(await storage.read('1/ab/nothing/here.txt'), undefined);
  });
}

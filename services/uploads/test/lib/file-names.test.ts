import t from 'tap';
import { isPathIdShaped, newPathId, sanitizeFileName } from '../../src/lib/file-names.js';

t.test('sanitizeFileName keeps letters, digits, _ . - and makes runs of space and - one -', async (t) => {
  const cases: Array<[string, string]> = [
    ['zulip.txt', 'zulip.txt'],
    ['my file  name.txt', 'my-file-name.txt'],
    ['a - b.txt', 'a-b.txt'],
    ['../../etc/passwd', '....etcpasswd'],
    ['..\\..\\boot.ini', '....boot.ini'],
    ['<script>alert(1)</script>.html', 'scriptalert1script.html'],
    ['Ophélie à la rivière.pdf', 'Ophélie-à-la-rivière.pdf'],
    ['日本語のファイル.png', '日本語のファイル.png'],
    ['ﬁle.txt', 'file.txt'],
    ['', 'uploaded-file'],
    ['.', 'uploaded-file'],
    ['..', 'uploaded-file'],
    ['/', 'uploaded-file'],
    ['  padded  ', 'padded'],
    ['nul\u0000byte.txt', 'nulbyte.txt'],
  ];
  for (const [given, want] of cases) t.equal(sanitizeFileName(given), want, JSON.stringify(given));
});

t.test('sanitizeFileName bounds the length and keeps the extension', async (t) => {
  const long = sanitizeFileName(`${'é'.repeat(300)}.jpeg`);
  t.ok(Buffer.byteLength(long) <= 200);
  t.ok(long.endsWith('.jpeg'));
});

t.test('newPathId has Zulip shape and is random', async (t) => {
  const a = newPathId(7, 'f.txt');
  t.match(a, /^7\/[0-9a-f]{2}\/[A-Za-z0-9_-]{24}\/f\.txt$/);
  t.not(a, newPathId(7, 'f.txt'));
  t.ok(isPathIdShaped(a));
});

t.test('isPathIdShaped refuses traversal and odd shapes', async (t) => {
  for (const p of ['1/aa/bb', '1/aa/bb/cc/dd', '1/aa/../cc', '1//bb/cc', '1/aa/bb/.', '1/aa/bb/..', '1/a\\b/c/d', '1/aa/bb/c\u0000']) {
    t.notOk(isPathIdShaped(p), JSON.stringify(p));
  }
});

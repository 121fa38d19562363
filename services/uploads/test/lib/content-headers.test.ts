import t from 'tap';
import { contentTypeOf, servedHeaders } from '../../src/lib/content-headers.js';

t.test('contentTypeOf takes the declared type, or guesses from the name', async (t) => {
  t.equal(contentTypeOf('image/PNG', 'x.bin'), 'image/png');
  t.equal(contentTypeOf('text/plain; charset=utf-8', 'x'), 'text/plain');
  t.equal(contentTypeOf('application/octet-stream', 'x.pdf'), 'application/pdf');
  t.equal(contentTypeOf(undefined, 'x.JPG'), 'image/jpeg');
  t.equal(contentTypeOf('', 'noext'), 'application/octet-stream');
  t.equal(contentTypeOf('not a type', 'x.gif'), 'image/gif');
});

t.test('a part without a type (reported as text/plain) takes the type its name says', async (t) => {
  t.equal(contentTypeOf('text/plain', 'harbour.jpg'), 'image/jpeg', 'python-zulip-api sends no part type');
  t.equal(contentTypeOf('text/plain', 'report.pdf'), 'application/pdf');
  t.equal(contentTypeOf('text/plain', 'logo.svg'), 'image/svg+xml', 'then served as an attachment, never inline (below)');
  t.equal(contentTypeOf('text/plain', 'page.html'), 'text/plain');
  t.equal(contentTypeOf('text/plain', 'data.csv'), 'text/plain', 'a text type stays as said');
  t.equal(contentTypeOf('text/plain', 'notes'), 'text/plain');
  t.equal(contentTypeOf('text/plain; charset=utf-8', 'x.bin'), 'text/plain');
});

t.test('servedHeaders shows only safe types inline and never serves active content as such', async (t) => {
  t.match(servedHeaders('image/png', 'a.png'), { 'content-type': 'image/png', 'content-disposition': /^inline; / });
  t.match(servedHeaders('application/pdf', 'a.pdf'), { 'content-disposition': /^inline; / });
  for (const type of ['text/html', 'image/svg+xml', 'application/xhtml+xml', 'text/xml', 'application/javascript']) {
    const h = servedHeaders(type, 'x');
    t.equal(h['content-type'], 'application/octet-stream', type);
    t.match(h['content-disposition'], /^attachment; /, type);
  }
  t.match(servedHeaders('text/plain', 'a.txt'), { 'content-type': 'text/plain', 'content-disposition': /^attachment; / });
  const h = servedHeaders('text/plain', 'Ophélie "x".txt');
  t.equal(h['content-disposition'], `attachment; filename="Oph_lie _x_.txt"; filename*=UTF-8''Oph%C3%A9lie%20%22x%22.txt`);
  t.equal(h['x-content-type-options'], 'nosniff');
  t.match(h['content-security-policy'], /sandbox/);
});

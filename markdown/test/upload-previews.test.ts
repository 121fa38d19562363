// Inline previews of uploaded images: only uploads the context knows as thumbnailed images
// get one (Zulip previews uploads by what they are, not by their names), with the thumbnail
// as `src` and the original's size; external images keep the by-extension rule.

import t from 'tap';
import { render, type UploadedImagePreview } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const IMAGES = new Map<string, UploadedImagePreview>([
  ['2/ab/xyz/castle.png', { width: 1600, height: 1200, animated: false, thumbnailUrl: '/user_uploads/thumbnail/2/ab/xyz/castle.png/840x560.webp' }],
  ['2/cd/uvw/dance.gif', { width: 120, height: 80, animated: true, thumbnailUrl: '/user_uploads/thumbnail/2/cd/uvw/dance.gif/840x560.webp' }],
]);
const run = (input: string, o: { inlineImagePreview?: boolean } = {}) =>
  render(input, { ...fixtureContext(), uploadedImages: { byPathId: (p) => IMAGES.get(p) }, ...o });

t.test('a linked uploaded image gets its thumbnail as the preview', async (t) => {
  const r = run('[castle.png](/user_uploads/2/ab/xyz/castle.png)');
  t.equal(
    r.html,
    '<p><a href="/user_uploads/2/ab/xyz/castle.png">castle.png</a></p>\n' +
      '<div class="message_inline_image"><a href="/user_uploads/2/ab/xyz/castle.png" title="castle.png">' +
      '<img data-original-dimensions="1600x1200" src="/user_uploads/thumbnail/2/ab/xyz/castle.png/840x560.webp"></a></div>',
  );
  t.ok(r.has_image);
  t.same(r.attachment_path_ids, ['2/ab/xyz/castle.png']);
});

t.test('an animated one is marked so clients can swap in the animated format', async (t) => {
  t.match(run('[dance](/user_uploads/2/cd/uvw/dance.gif)').html, '<img data-animated="true" data-original-dimensions="120x80" src="/user_uploads/thumbnail/2/cd/uvw/dance.gif/840x560.webp">');
});

t.test('an absolute link to the realm previews the same upload', async (t) => {
  t.match(run('http://zulip.testserver/user_uploads/2/ab/xyz/castle.png').html, 'src="/user_uploads/thumbnail/2/ab/xyz/castle.png/840x560.webp"');
});

t.test('an upload that is no thumbnailed image gets no preview, whatever its name', async (t) => {
  const r = run('[fake.png](/user_uploads/2/ef/rst/fake.png)');
  t.equal(r.html, '<p><a href="/user_uploads/2/ef/rst/fake.png">fake.png</a></p>');
  t.notOk(r.has_image);
  const none = render('[castle.png](/user_uploads/2/ab/xyz/castle.png)', fixtureContext());
  t.notMatch(none.html, /message_inline_image/, 'nor without the lookup');
});

t.test('the realm setting turns upload previews off too; quotes are not previewed', async (t) => {
  t.notMatch(run('[castle.png](/user_uploads/2/ab/xyz/castle.png)', { inlineImagePreview: false }).html, /message_inline_image/);
  t.notMatch(run('> [castle.png](/user_uploads/2/ab/xyz/castle.png)').html, /message_inline_image/);
});

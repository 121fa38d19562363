import t from 'tap';
import { renderContent, type RenderContext } from '../../src/lib/render.js';

const ctx: RenderContext = {
  realmUrl: 'http://chat.test',
  users: {
    byFullName: (n) => (n.toLowerCase() === 'king hamlet' ? { id: 4, full_name: 'King Hamlet' } : n === 'Gone' ? { id: 9, full_name: 'Gone', is_active: false } : undefined),
    byId: (id) => (id === 4 ? { id: 4, full_name: 'King Hamlet' } : undefined),
  },
  streams: { byName: (n) => (n === 'Denmark' ? { id: 3, name: 'Denmark' } : undefined) },
};

t.test('user text is always escaped; paragraphs and line breaks', async (t) => {
  const r = renderContent('<script>alert("x")</script> & \'q\'\nnext line\n\n\nnew paragraph', ctx);
  t.equal(r.html, '<p>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;<br>\nnext line</p>\n<p>new paragraph</p>');
  t.same(r.mentioned_user_ids, []);
  t.equal(r.wildcard_mention, null);
});

t.test('links, with attachments recognised', async (t) => {
  const r = renderContent('see https://example.com/a?b=1&c="2". and http://chat.test/user_uploads/1/ab/file.pdf', ctx);
  t.equal(r.has_link, true);
  t.equal(r.has_attachment, true);
  t.match(r.html, '<a href="https://example.com/a?b=1&amp;c=">https://example.com/a?b=1&amp;c=</a>&quot;2&quot;.', 'a quote ends a URL, so no attribute can be broken out of');
  t.notMatch(r.html, /href="[^"]*\."/, 'trailing punctuation stays outside the link');
  t.match(renderContent('javascript:alert(1)', ctx).html, '<p>javascript:alert(1)</p>');
});

t.test('mentions, silent mentions, wildcards, stream links', async (t) => {
  const r = renderContent('@**King Hamlet** @**king hamlet|4** @_**King Hamlet** @**Nobody** @**Gone** #**Denmark** #**Nowhere**', ctx);
  t.same(r.mentioned_user_ids, [4]);
  t.match(r.html, '<span class="user-mention" data-user-id="4">@King Hamlet</span>');
  t.match(r.html, '<span class="user-mention silent" data-user-id="4">King Hamlet</span>');
  t.match(r.html, '@**Nobody**', 'an unknown name stays text');
  t.match(r.html, '<span class="user-mention silent" data-user-id="9">Gone</span>', 'deactivated users are mentioned silently');
  t.match(r.html, '<a class="stream" data-stream-id="3" href="/#narrow/stream/3-Denmark">#Denmark</a>');
  t.match(r.html, '#**Nowhere**');
  t.equal(renderContent('@**all** hi', ctx).wildcard_mention, 'stream');
  t.equal(renderContent('@**everyone** hi', ctx).wildcard_mention, 'stream');
  t.equal(renderContent('@**topic** hi', ctx).wildcard_mention, 'topic');
  t.equal(renderContent('@_**all** hi', ctx).wildcard_mention, null, 'a silent wildcard notifies nobody');
  t.equal(renderContent('/me waves', ctx).is_me_message, true);
});

import t from 'tap';
import { renderContent, topicLinksOf, type RenderContext } from '../../src/lib/render.js';

const ctx: RenderContext = {
  realmUrl: 'http://chat.test',
  users: {
    byFullName: (n) => (n.toLowerCase() === 'king hamlet' ? { id: 4, full_name: 'King Hamlet' } : undefined),
    byId: (id) => (id === 4 ? { id: 4, full_name: 'King Hamlet' } : undefined),
  },
  streams: { byName: (n) => (n === 'Denmark' ? { id: 3, name: 'Denmark' } : undefined) },
  linkifiers: [{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.test/{id}' }],
  alertWords: ['castle'],
};

t.test('renders through @zc/markdown, escaping what the user typed', async (t) => {
  const r = renderContent('**bold** <script>alert(1)</script> @**King Hamlet** #**Denmark** #12 castle!', ctx);
  t.match(r.html, '<strong>bold</strong>');
  t.match(r.html, '&lt;script&gt;');
  t.match(r.html, '<span class="user-mention" data-user-id="4">@King Hamlet</span>');
  t.match(r.html, 'href="https://tracker.test/12"');
  t.same(r.mentioned_user_ids, [4]);
  t.same(r.alert_words_found, ['castle']);
  t.equal(r.has_link, true);
});

t.test('topic links follow the linkifiers; an empty topic has none', async (t) => {
  t.same(topicLinksOf('fix #7 and #8', ctx.linkifiers ?? []), [
    { text: '#7', url: 'https://tracker.test/7' },
    { text: '#8', url: 'https://tracker.test/8' },
  ]);
  t.same(topicLinksOf('', ctx.linkifiers ?? []), []);
});

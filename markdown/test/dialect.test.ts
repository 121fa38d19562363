// Parts of the dialect the Zulip fixtures cover only lightly.

import t from 'tap';
import { mayTranslateEmoticons, render } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const html = (input: string): string => render(input, fixtureContext()).html;

t.test('empty and blank messages render to nothing', async (t) => {
  t.equal(html(''), '');
  t.equal(html('  \n\n '), '');
});

t.test('headings need a space and stop at six hashes', async (t) => {
  t.equal(html('### Three ###'), '<h3>Three</h3>');
  t.equal(html('text\n# head\nmore'), '<p>text</p>\n<h1>head</h1>\n<p>more</p>');
});

t.test('tables align columns from the separator row', async (t) => {
  t.equal(
    html('| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 |'),
    '<table>\n<thead>\n<tr>\n<th style="text-align: left;">a</th>\n<th style="text-align: center;">b</th>\n<th style="text-align: right;">c</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td style="text-align: left;">1</td>\n<td style="text-align: center;">2</td>\n<td style="text-align: right;"></td>\n</tr>\n</tbody>\n</table>',
  );
});

t.test('loose lists wrap items in paragraphs', async (t) => {
  t.equal(html('* a\n\n* b'), '<ul>\n<li>\n<p>a</p>\n</li>\n<li>\n<p>b</p>\n</li>\n</ul>');
});

t.test('bulleted and numbered lists touching each other stay separate', async (t) => {
  t.equal(html('* a\n1. b'), '<ul>\n<li>a</li>\n</ul>\n<ol>\n<li>b</li>\n</ol>');
});

t.test('fenced code names its language and highlights known ones', async (t) => {
  t.equal(
    html('```js\nlet x = "<a>";\n```'),
    '<div class="codehilite" data-code-language="JavaScript"><pre><span></span><code>let x = "&lt;a&gt;";\n</code></pre></div>',
  );
  t.equal(
    html('```python\nx = "hi"  # note\n```'),
    '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="n">x</span> <span class="o">=</span> <span class="s2">"hi"</span>  <span class="c1"># note</span>\n</code></pre></div>',
  );
});

t.test('indented code blocks', async (t) => {
  t.equal(html('    a < b'), '<div class="codehilite"><pre><span></span><code>a &lt; b\n</code></pre></div>');
});

t.test('spoilers keep Markdown in the title and body', async (t) => {
  t.equal(
    html('```spoiler **Big** news\n*yes*\n```'),
    '<div class="spoiler-block"><div class="spoiler-header">\n<p><strong>Big</strong> news</p>\n</div><div class="spoiler-content" aria-hidden="true">\n<p><em>yes</em></p>\n</div></div>',
  );
});

t.test('bad math shows the source in an error span', async (t) => {
  t.equal(html('$$\\frac{1$$'), '<p><span class="tex-error">$$\\frac{1$$</span></p>');
  t.equal(html('```math\n\\frac{1\n```'), '<p><span class="tex-error">\\frac{1</span></p>');
});

t.test('global times in several notations', async (t) => {
  const time = (v: string): string => html(`<time:${v}>`);
  t.equal(time('2024-01-01T10:00:00Z'), '<p><time datetime="2024-01-01T10:00:00Z">2024-01-01T10:00:00Z</time></p>');
  t.equal(time('2024-01-01T10:00:00+02:00'), '<p><time datetime="2024-01-01T08:00:00Z">2024-01-01T10:00:00+02:00</time></p>');
  t.equal(time('2024-03-05'), '<p><time datetime="2024-03-05T00:00:00Z">2024-03-05</time></p>');
  t.equal(time('Jan 5, 2024 3pm PST'), '<p><time datetime="2024-01-05T23:00:00Z">Jan 5, 2024 3pm PST</time></p>');
  t.equal(time('1700000000'), '<p><time datetime="2023-11-14T22:13:20Z">1700000000</time></p>');
  t.equal(time('tomorrow'), '<p><span class="timestamp-error">Invalid time format: tomorrow</span></p>');
});

t.test('emoji by name, emoticons only when asked, Unicode emoji', async (t) => {
  t.equal(html(':+1:'), '<p><span aria-label="+1" class="emoji emoji-1f44d" role="img" title="+1">:+1:</span></p>');
  t.equal(html(':-)'), '<p>:-)</p>');
  t.equal(
    render(';)', fixtureContext({ translateEmoticons: true })).html,
    '<p><span aria-label="wink" class="emoji emoji-1f609" role="img" title="wink">:wink:</span></p>',
  );
  t.equal(html('🎉'), '<p><span aria-label="tada" class="emoji emoji-1f389" role="img" title="tada">:tada:</span></p>');
});

t.test('mayTranslateEmoticons: true wherever the setting could change the HTML', async (t) => {
  const emoticonCtx = fixtureContext({ translateEmoticons: true });
  for (const input of [':)', 'Translate this :).', 'a <3 b', '!:)?', '`:)`', 'hello', 'see https://x.example/a', 'a:)', ':)b', ': )', '']) {
    const differs = render(input, emoticonCtx).html !== html(input);
    t.equal(mayTranslateEmoticons(input), differs, `${JSON.stringify(input)}: ${differs ? 'needs' : 'does not need'} the setting`);
  }
  t.ok(mayTranslateEmoticons('` :) `'), 'code is not parsed: a superset, never a miss');
});

t.test('realm emoji come before Unicode names', async (t) => {
  const ctx = fixtureContext({
    realmEmoji: { byName: (name) => (name === 'party' ? { name, source_url: '/user_avatars/2/emoji/party.png' } : undefined) },
  });
  t.equal(
    render(':party:', ctx).html,
    '<p><img alt=":party:" class="emoji" src="/user_avatars/2/emoji/party.png" title="party"></p>',
  );
});

t.test('image previews go after the paragraph, in order, once per URL', async (t) => {
  const out = render('a http://x.org/1.png b http://x.org/2.gif http://x.org/1.png\n\nnext', fixtureContext({ imageProxy: undefined })).html;
  t.equal(
    out,
    '<p>a <a href="http://x.org/1.png">http://x.org/1.png</a> b <a href="http://x.org/2.gif">http://x.org/2.gif</a> <a href="http://x.org/1.png">http://x.org/1.png</a></p>\n' +
      '<div class="message_inline_image"><a href="http://x.org/1.png"><img src="http://x.org/1.png"></a></div>' +
      '<div class="message_inline_image"><a href="http://x.org/2.gif"><img src="http://x.org/2.gif"></a></div><p>next</p>',
  );
});

t.test('no previews for quoted links or when previews are off', async (t) => {
  t.notMatch(html('> http://x.org/1.png'), /message_inline_image/);
  t.notMatch(render('http://x.org/1.png', fixtureContext({ inlineImagePreview: false })).html, /message_inline_image/);
});

t.test('a realm default language applies to untagged fences', async (t) => {
  t.match(render('```\nx = 1\n```', fixtureContext({ defaultCodeBlockLanguage: 'python' })).html, /data-code-language="Python"/);
});

// Realm linkifiers in messages and topics, their validation, and the legacy
// url_format_string conversion.

import t from 'tap';
import { render, renderTopicLinks, urlFormatStringToTemplate, validateLinkifier } from '../src/index.js';
import type { Linkifier } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const TRAC: Linkifier = { id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/ticket/{id}' };
const GITHUB: Linkifier = {
  id: 2,
  pattern: '(?P<org>[a-z]+)/(?P<repo>[a-z]+)#(?P<id>[0-9]+)',
  url_template: 'https://github.com/{org}/{repo}/issues/{id}',
};

const html = (input: string, linkifiers: Linkifier[] = [TRAC]): string =>
  render(input, fixtureContext({ linkifiers })).html;

t.test('a linkifier match becomes a link labelled with the matched text', async (t) => {
  t.equal(html('see #123 now'), '<p>see <a href="https://trac.example.com/ticket/123">#123</a> now</p>');
});

t.test('matches only after a boundary and not before a letter or digit', async (t) => {
  t.equal(html('x#123 #12a'), '<p>x#123 #12a</p>');
  t.equal(html('(#7), #8.'), '<p>(<a href="https://trac.example.com/ticket/7">#7</a>), <a href="https://trac.example.com/ticket/8">#8</a>.</p>');
});

t.test('adjacent matches separated by one space are both linked', async (t) => {
  t.equal(
    html('#1 #2'),
    '<p><a href="https://trac.example.com/ticket/1">#1</a> <a href="https://trac.example.com/ticket/2">#2</a></p>',
  );
});

t.test('linkifiers are not applied inside code or links', async (t) => {
  t.equal(html('`#1`'), '<p><code>#1</code></p>');
  t.equal(html('[#1](https://example.com)'), '<p><a href="https://example.com">#1</a></p>');
});

t.test('several groups expand into the template; values are percent-encoded', async (t) => {
  t.equal(html('zulip/zulip#42', [GITHUB]), '<p><a href="https://github.com/zulip/zulip/issues/42">zulip/zulip#42</a></p>');
  const spaced: Linkifier = { id: 3, pattern: 'T:(?P<name>[^ ]+)', url_template: 'https://example.com/t/{name}' };
  t.equal(html('T:a&b', [spaced]), '<p><a href="https://example.com/t/a%26b">T:a&amp;b</a></p>');
});

t.test('earlier linkifiers take precedence over later ones', async (t) => {
  const other: Linkifier = { id: 9, pattern: '#(?P<n>[0-9]+)', url_template: 'https://other.example.com/{n}' };
  t.match(html('#5', [TRAC, other]), /trac\.example\.com/);
  t.match(html('#5', [other, TRAC]), /other\.example\.com/);
});

t.test('a template producing an unsafe URL leaves the text alone', async (t) => {
  const evil: Linkifier = { id: 4, pattern: 'go:(?P<x>\\S+)', url_template: '{+x}' };
  t.equal(html('go:javascript:alert(1)', [evil]), '<p>go:javascript:alert(1)</p>');
});

t.test('a linkifier whose pattern RE2 rejects is ignored', async (t) => {
  const broken: Linkifier = { id: 5, pattern: '(?<=x)#(?P<id>\\d+)', url_template: 'https://x/{id}' };
  t.equal(html('#1', [broken]), '<p>#1</p>');
});

t.test('patterns that backtrack catastrophically elsewhere stay fast under RE2', async (t) => {
  const nasty: Linkifier = { id: 6, pattern: '(?P<a>(a+)+)b', url_template: 'https://x/{a}' };
  t.equal(html(`${'a'.repeat(5000)}!`, [nasty]), `<p>${'a'.repeat(5000)}!</p>`);
});

t.test('links to this realm become relative', async (t) => {
  const local: Linkifier = { id: 7, pattern: 'L(?P<id>\\d+)', url_template: 'http://zulip.testserver/#narrow/near/{id}' };
  t.equal(html('L5', [local]), '<p><a href="#narrow/near/5">L5</a></p>');
});

t.test('validateLinkifier reports Zulip\'s errors', async (t) => {
  t.equal(validateLinkifier('#(?P<id>[0-9]+)', 'https://x/{id}'), undefined);
  t.equal(validateLinkifier('(foo', 'https://x/'), 'Bad regular expression: missing ): (foo');
  t.equal(validateLinkifier('#(?P<id>[0-9]+', 'https://x/{id}'), 'Bad regular expression: missing ): #(?P<id>[0-9]+');
  t.equal(validateLinkifier('#(?P<id>[0-9]+)', 'https://x/{id'), 'Invalid URL template.');
  t.equal(validateLinkifier('#(?P<id>[0-9]+)', 'https://x/{i d}'), 'Invalid URL template.');
  t.equal(
    validateLinkifier('#(?P<id>[0-9]+)', 'https://x/{id}/{other}'),
    "Group 'other' in URL template is not present in linkifier pattern.",
  );
  t.equal(
    validateLinkifier('(?P<b>[a-z]+)#(?P<a>[0-9]+)', 'https://x/{b}'),
    "Group 'a' in linkifier pattern is not present in URL template.",
  );
});

t.test('url_format_string converts to a URL template', async (t) => {
  t.equal(urlFormatStringToTemplate('https://trac.example.com/ticket/%(id)s'), 'https://trac.example.com/ticket/{id}');
  t.equal(urlFormatStringToTemplate('https://x.com/%(org)s/%(repo)s'), 'https://x.com/{org}/{repo}');
  t.equal(urlFormatStringToTemplate('https://x.com/search?q=%%20%(q)s'), 'https://x.com/search?q=%20{q}');
  t.equal(urlFormatStringToTemplate('https://x.com/{literal}'), 'https://x.com/%7Bliteral%7D');
});

t.test('topic links: linkifier matches and bare URLs, in order, without overlaps', async (t) => {
  t.same(renderTopicLinks('fix #123 per https://zulip.com/x and example.org', [TRAC]), [
    { text: '#123', url: 'https://trac.example.com/ticket/123' },
    { text: 'https://zulip.com/x', url: 'https://zulip.com/x' },
    { text: 'example.org', url: 'https://example.org' },
  ]);
  t.same(renderTopicLinks('zulip/zulip#42', [GITHUB, TRAC]), [
    { text: 'zulip/zulip#42', url: 'https://github.com/zulip/zulip/issues/42' },
  ]);
  t.same(renderTopicLinks('nothing here', [TRAC]), []);
});

t.test('hundreds of distinct linkifiers in one process all compile, render and validate', async (t) => {
  // The WebAssembly RE2 build held about 70 before its fixed heap aborted, after which no
  // linkifier rendered or validated anywhere in the process.
  const many: Linkifier[] = Array.from({ length: 400 }, (_, i) => ({ id: 1000 + i, pattern: `MANY${i}-(?P<n>[0-9]+)`, url_template: `https://many.example/${i}/{n}` }));
  for (const [i, l] of many.entries()) t.equal(validateLinkifier(l.pattern, l.url_template), undefined, `pattern ${i} validates`);
  t.equal(html('see MANY399-7 and MANY0-1', many), '<p>see <a href="https://many.example/399/7">MANY399-7</a> and <a href="https://many.example/0/1">MANY0-1</a></p>');
  t.equal(validateLinkifier('(foo', 'https://x/'), 'Bad regular expression: missing ): (foo', 'validation still works afterwards');
});

t.test('syntax errors are worded as RE2 words them', async (t) => {
  t.equal(validateLinkifier('a(?=b)', 'https://x/'), 'Bad regular expression: invalid perl operator: (?=');
  t.equal(validateLinkifier('[z-a]', 'https://x/'), 'Bad regular expression: invalid character class range: z-a');
  t.equal(validateLinkifier('a**', 'https://x/'), 'Bad regular expression: bad repetition operator: **');
  t.equal(validateLinkifier('(?P<a>x)(?P<a>y)', 'https://x/{a}'), 'Bad regular expression: invalid named capture group: a');
});

// No markup from the user reaches the HTML: tags are escaped, links and
// previews only use safe schemes, and attribute values cannot be broken out of.

import t, { type Test } from 'tap';
import { render, sanitizeUrl } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const html = (input: string): string => render(input, fixtureContext()).html;

/** Every tag in the output is one the renderer itself produces. */
const OUR_TAGS = new Set([
  'p', 'br', 'a', 'em', 'strong', 'del', 'code', 'pre', 'div', 'span', 'blockquote', 'ul', 'ol', 'li',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'img', 'video', 'time',
  'math', 'semantics', 'mrow', 'mi', 'mn', 'mo', 'msup', 'mtext', 'annotation', 'mstyle', 'mspace',
]);

/**
 * Checks every real tag in the output (text can only hold `&lt;`, so a
 * literal `<` always starts one of ours): a known tag name, no event-handler
 * attribute, and no dangerous scheme in href/src.
 */
function assertOnlyOurMarkup(t: Test, out: string): void {
  for (const tag of out.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)([^>]*)>/g)) {
    const [, name, attrs] = tag as unknown as [string, string, string];
    t.ok(OUR_TAGS.has(name.toLowerCase()), `tag <${name}> is one of ours`);
    for (const attr of attrs.matchAll(/\s([a-zA-Z-]+)="([^"]*)"/g)) {
      const [, key, value] = attr as unknown as [string, string, string];
      t.notOk(/^on/i.test(key), `no event handler attribute (${key})`);
      if (key === 'href' || key === 'src') {
        t.notMatch(value, /^\s*(?:javascript|data|vbscript):/i, `safe ${key}: ${value}`);
      }
    }
    // Whatever is between the quoted attributes must be nothing but spaces.
    t.equal(attrs.replace(/\s[a-zA-Z-]+="[^"]*"/g, '').trim(), '', `attributes of <${name}> are well-formed`);
  }
}

const ATTACKS = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '[click](javascript:alert(1))',
  '[click](JaVaScRiPt:alert(1))',
  '[click](  javascript:alert(1))',
  '[click](java\tscript:alert(1))',
  '[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[click](vbscript:msgbox(1))',
  '[click](&#106;avascript:alert(1))',
  '[x](http://example.com/" onmouseover="alert(1))',
  '[x](http://example.com/"><script>alert(1)</script>)',
  'http://example.com/"><img src=x onerror=alert(1)>',
  'http://example.com/a.png"onerror="alert(1)',
  '@**King Hamlet" onclick="alert(1)**',
  '@**<script>alert(1)</script>**',
  '#**Denmark"><script>alert(1)</script>**',
  '#**Denmark>"><img src=x onerror=alert(1)>**',
  ':smile" onload="alert(1):',
  '<time:"><script>alert(1)</script>>',
  '```"><script>alert(1)</script>\ncode\n```',
  '```spoiler <img src=x onerror=alert(1)>\n<b>hi</b>\n```',
  '$$\\href{javascript:alert(1)}{x}$$',
  '$$\\url{javascript:alert(1)}$$',
  '```math\n\\htmlClass{x" onclick="alert(1)}{y}\n```',
  '| <b>a</b> | b |\n|---|---|\n| <script>x</script> | y |',
  '* <iframe src="javascript:alert(1)"></iframe>',
  '> <svg onload=alert(1)>',
  '# <style>body{}</style>',
  '\u0002w0\u0003 \u0002k0\u0003',
];

t.test('user markup is always escaped', async (t) => {
  for (const attack of ATTACKS) {
    t.test(JSON.stringify(attack), async (t) => assertOnlyOurMarkup(t, html(attack)));
  }
});

t.test('links with forbidden schemes stay plain text', async (t) => {
  t.equal(html('[click](javascript:alert(1))'), '<p>[click](javascript:alert(1))</p>');
  t.equal(html('[a](data:text/html,hi)'), '<p>[a](data:text/html,hi)</p>');
  t.equal(html('[a](vbscript:x)'), '<p>[a](vbscript:x)</p>');
});

t.test('quotes in a link target cannot leave the attribute', async (t) => {
  const out = html('[x](http://example.com/"onmouseover="alert(1))');
  t.match(out, /href="http:\/\/example\.com\/&quot;onmouseover=&quot;alert\(1\)"/);
});

t.test('an entity cannot smuggle a scheme into an attribute', async (t) => {
  const out = html('[x](&#106;avascript:alert(1))');
  t.notMatch(out, /href="&#106;/);
  t.match(out, /href="http:\/\/&amp;#106;/);
});

t.test('raw-HTML placeholders cannot be forged from input', async (t) => {
  const out = render('```\ncode\n```\n\u0002w0\u0003', fixtureContext()).html;
  t.equal((out.match(/codehilite/g) ?? []).length, 1, 'the stashed block appears once');
});

t.test('math cannot create links or attributes', async (t) => {
  const out = html('$$\\href{javascript:alert(1)}{x}$$');
  t.notMatch(out, /href=/);
});

t.test('sanitizeUrl keeps only safe targets', async (t) => {
  t.equal(sanitizeUrl('https://example.com/x?y#z'), 'https://example.com/x?y#z');
  t.equal(sanitizeUrl('example.com'), 'http://example.com');
  t.equal(sanitizeUrl('/user_uploads/1/a.png'), '/user_uploads/1/a.png');
  t.equal(sanitizeUrl('#narrow/channel/1-x'), '#narrow/channel/1-x');
  t.equal(sanitizeUrl('a@b.com'), 'mailto:a@b.com');
  t.equal(sanitizeUrl('javascript:alert(1)'), undefined);
  t.equal(sanitizeUrl('data:text/html,x'), undefined);
  t.equal(sanitizeUrl('vbscript:x'), undefined);
  t.equal(sanitizeUrl('ftp://example.com'), undefined);
  t.equal(sanitizeUrl('http://x\u0000y'), undefined);
});

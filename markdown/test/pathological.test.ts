// Hostile input must render in bounded time without throwing, and still come
// out escaped. Only completion is asserted here (no timings: CI machines vary);
// the scanners are linear by construction and nesting depth is capped.

import t from 'tap';
import { render } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const N = 10_000;
const ctx = fixtureContext({
  translateEmoticons: true,
  linkifiers: [{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' }],
});

const INPUTS: Record<string, string> = {
  'a run of stars': '*'.repeat(N),
  'a run of underscores': '_'.repeat(N),
  'a run of backticks': '`'.repeat(N),
  'a run of opening brackets': '['.repeat(N),
  'a run of opening parentheses': '('.repeat(N),
  'a run of tildes': '~'.repeat(N),
  'a run of dollars': '$'.repeat(N),
  'a run of colons': ':'.repeat(N),
  'a run of less-than signs': '<'.repeat(N),
  'unclosed links': '[a]('.repeat(N / 4),
  'brackets then parentheses': `${'['.repeat(N / 2)}${'](x'.repeat(N / 6)}`,
  'alternating emphasis openers': '*a **b ***c '.repeat(N / 12),
  'unclosed strikethrough': '~~a '.repeat(N / 4),
  'backtick runs of growing length': Array.from({ length: 140 }, (_, i) => '`'.repeat(i + 1)).join('x'),
  'escaped backticks': '\\`'.repeat(N / 2),
  'unclosed mentions': '@**a'.repeat(N / 4),
  'unclosed channel links': '#**a>'.repeat(N / 5),
  'URL-like text': 'http://a.com/,'.repeat(N / 14),
  'a URL with deep parentheses': `http://a.com/${'('.repeat(N / 2)}${')'.repeat(N / 2)}`,
  'many domain labels': 'a.'.repeat(N / 2),
  'e-mail-like text': 'a@b.'.repeat(N / 4),
  'math-like text': '$$a\\$'.repeat(N / 5),
  'deeply nested braces in math': `$$${'{'.repeat(5000)}$$`,
  'unclosed time tags': '<time:'.repeat(N / 6),
  'a 10,000-byte line of words': 'word '.repeat(N / 5),
  'deeply nested quotes': `${'>'.repeat(N)} deep`,
  'many quote levels': Array.from({ length: 2000 }, (_, i) => `${'> '.repeat(i % 60)}x`).join('\n'),
  'deeply nested lists': Array.from({ length: 500 }, (_, i) => `${'  '.repeat(i)}* item`).join('\n'),
  'deeply nested fences': Array.from({ length: 2000 }, () => '```quote').join('\n'),
  'deeply nested spoilers': Array.from({ length: 2000 }, () => '```spoiler x').join('\n'),
  'a wide table': `${'|a'.repeat(N / 2)}\n${'|-'.repeat(N / 2)}`,
  'many headings': '# h\n'.repeat(N / 4),
  'many emoji names': ':smile:'.repeat(N / 7),
  'many Unicode emoji': '😀'.repeat(N / 2),
  'many joiners': '👁\u200d'.repeat(N / 3),
  'many linkifier matches': '#1 '.repeat(N / 3),
  'mixed punctuation': '*_`[~$:@#<>&()!|'.repeat(N / 16),
};

for (const [name, input] of Object.entries(INPUTS)) {
  t.test(`renders ${name}`, async (t) => {
    const { html } = render(input, ctx);
    t.type(html, 'string');
    t.notMatch(html, /<(?!\/?(?:p|br|a|em|strong|del|code|pre|div|span|blockquote|ul|ol|li|h[1-6]|table|thead|tbody|tr|th|td|img|video|time|math|semantics|mrow|mi|mn|mo|mtext|annotation|msup|msub|mspace)[\s>])/);
  });
}

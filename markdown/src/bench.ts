// Render throughput, for the project's benchmark runner: a typical short
// message and a long one with code, lists and links. About two seconds total.

import type { RenderContext } from './context.js';
import { render } from './index.js';

export interface BenchResult {
  name: string;
  ops_per_sec: number;
  mean_us: number;
}

const USERS = [
  { id: 1, full_name: 'Alice Example' },
  { id: 2, full_name: 'Bob Example' },
];

const CONTEXT: RenderContext = {
  realmUrl: 'https://chat.example.com',
  linkifiers: [{ id: 1, pattern: '#(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/issues/{id}' }],
  users: {
    byFullName: (name) => USERS.find((u) => u.full_name.toLowerCase() === name.toLowerCase()),
    byId: (id) => USERS.find((u) => u.id === id),
  },
  streams: { byName: (name) => (name.toLowerCase() === 'general' ? { id: 1, name: 'general' } : undefined) },
  translateEmoticons: true,
};

/** About 200 bytes: a mention, emphasis, a link, inline code and an emoji. */
const SHORT_MESSAGE =
  '@**Alice Example** I pushed the fix for #1234 to **main**; see https://example.com/pr/5678 ' +
  'and the notes in `docs/release.md`. Can you check it on #**general** before lunch? :thumbs_up:';

function longMessage(): string {
  const section = [
    '## Status update',
    '',
    'Here is what *changed* this week, with links to https://example.com/changes and [the docs](https://docs.example.com/guide).',
    '',
    '* Fixed the login bug (#4321), thanks @**Bob Example**',
    '* Updated **dependencies**; see `package.json`',
    '  * nested note with ~~old~~ new wording :tada:',
    '1. Review',
    '2. Merge',
    '',
    '```python',
    'def handler(event):',
    '    if event["type"] == "message":',
    '        return process(event["content"])  # main path',
    '    return None',
    '```',
    '',
    '> Quoted text from an earlier message with a link http://example.org/page.',
    '',
  ].join('\n');
  let text = '';
  while (text.length < 10_000) text += `${section}\n`;
  return text.slice(0, 10_000);
}

function measure(name: string, content: string, budgetMs: number): BenchResult {
  for (let i = 0; i < 20; i++) render(content, CONTEXT); // warm-up
  let runs = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < budgetMs) {
    render(content, CONTEXT);
    runs++;
    elapsed = performance.now() - start;
  }
  const meanUs = (elapsed * 1000) / runs;
  return { name, ops_per_sec: Math.round(1e6 / meanUs), mean_us: Math.round(meanUs * 10) / 10 };
}

/** Measures render throughput; takes about two seconds. */
export function benchRender(): BenchResult[] {
  return [
    measure('markdown.render 200-byte message', SHORT_MESSAGE, 800),
    measure('markdown.render 10,000-byte message', longMessage(), 1000),
  ];
}

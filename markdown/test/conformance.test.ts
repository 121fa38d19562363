// Zulip's own Markdown conformance fixtures (a subset of Zulip Server 10.2's
// markdown_test_cases.json, kept outside the repository in shared/fixtures).
// Every case must match byte for byte, except those listed in KNOWN_SKIPS.

import { existsSync, readFileSync } from 'node:fs';
import t from 'tap';
import { render } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const FIXTURES = new URL('../../../shared/fixtures/markdown-cases.json', import.meta.url);

interface RegularCase {
  name: string;
  input: string;
  expected_output: string;
  translate_emoticons?: boolean;
}

interface Fixtures {
  regular_tests: RegularCase[];
  linkify_tests: Array<[input: string, template: string, url: string]>;
}

/** Cases we knowingly do not match, each with the reason. Keep this short and honest. */
const KNOWN_SKIPS: Record<string, string> = {};

/**
 * Zulip's test builds the expected HTML from a template: `%s` stands for a
 * link to `url` (mailto: for addresses, http:// when there is no scheme); a
 * template without `%s` is the expected output as is.
 */
function expectedLinkify(template: string, url: string): string {
  if (!template.includes('%s')) return template;
  const href = url.startsWith('http') ? url : url.includes('@') ? `mailto:${url}` : `http://${url}`;
  return template.replace('%s', `<a href="${href}">${url}</a>`);
}

if (!existsSync(FIXTURES)) {
  t.comment(`skipping: ${FIXTURES.pathname} is absent (the fixtures live in shared/, outside the repository)`);
  t.pass('conformance fixtures not available; nothing to compare');
} else {
  const fixtures = JSON.parse(readFileSync(FIXTURES, 'utf8')) as Fixtures;
  let matched = 0;
  let total = 0;

  t.test('regular_tests', async (t) => {
    for (const c of fixtures.regular_tests) {
      total++;
      const skip = KNOWN_SKIPS[c.name];
      if (skip) {
        t.skip(`${c.name}: ${skip}`, async () => {});
        continue;
      }
      const html = render(c.input, fixtureContext({ translateEmoticons: c.translate_emoticons === true })).html;
      if (html === c.expected_output) matched++;
      t.equal(html, c.expected_output, c.name);
    }
  });

  t.test('linkify_tests', async (t) => {
    for (const [input, template, url] of fixtures.linkify_tests) {
      total++;
      const skip = KNOWN_SKIPS[input];
      if (skip) {
        t.skip(`${input}: ${skip}`, async () => {});
        continue;
      }
      const expected = expectedLinkify(template, url);
      const html = render(input, fixtureContext()).html;
      if (html === expected) matched++;
      t.equal(html, expected, `linkify ${JSON.stringify(input)}`);
    }
  });

  t.teardown(() => {
    console.log(`# conformance: ${matched} of ${total} Zulip fixture cases match (${Object.keys(KNOWN_SKIPS).length} skipped)`);
  });
}

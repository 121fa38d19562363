// render() answers plain one-line text without the full pipeline; whatever it answers must be
// what the full pipeline gives, for every context that lets it take that path.

import t from 'tap';
import { render, renderFully, type RenderContext } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const ALPHABET = "abcXYZ019 ,?!'";

/** A deterministic pseudo-random generator (no flaky inputs between runs). */
function generator(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

const CONTEXTS: Record<string, RenderContext> = {
  'the fixture realm': fixtureContext({}),
  'emoticons translated and alert words': fixtureContext({ translateEmoticons: true, alertWords: ['abc', "it's"] }),
};

for (const [name, ctx] of Object.entries(CONTEXTS)) {
  t.test(`random lines over ${JSON.stringify(ALPHABET)}: ${name}`, async (t) => {
    const next = generator(14);
    let differing = 0;
    let first: string | undefined;
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + Math.floor(next() * 24);
      let s = '';
      for (let j = 0; j < length; j++) s += ALPHABET[Math.floor(next() * ALPHABET.length)];
      if (JSON.stringify(render(s, ctx)) !== JSON.stringify(renderFully(s, ctx))) {
        differing++;
        first ??= s;
      }
    }
    t.equal(differing, 0, `first differing input: ${JSON.stringify(first)}`);
  });
}

t.test('plain text still finds alert words and renders as a paragraph', async (t) => {
  const r = render("Hello it's me", fixtureContext({ alertWords: ["it's"] }));
  t.equal(r.html, "<p>Hello it's me</p>");
  t.same(r.alert_words_found, ["it's"]);
});

t.test('a realm with linkifiers always gets the full pipeline (a pattern may match plain words)', async (t) => {
  const ctx = fixtureContext({ linkifiers: [{ id: 1, pattern: 'fo(?P<id>[0-9]+)', url_template: 'https://tracker.example.com/{id}' }] });
  const r = render('see fo12', ctx);
  t.match(r.html, /href="https:\/\/tracker\.example\.com\/12"/);
  t.equal(r.has_link, true);
});

t.test('lines the fast path must not take', async (t) => {
  const ctx = fixtureContext({ translateEmoticons: true });
  for (const s of ['- item', '1. first', '    code', 'two  spaces', 'a.com', 'x :) y', 'a\nb', '# heading', '/me waves']) {
    t.same(render(s, ctx), renderFully(s, ctx), JSON.stringify(s));
  }
});

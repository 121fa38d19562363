import t from 'tap';
import { parseNarrow, searchTerms } from '../../src/lib/narrow.js';

t.test('both forms, aliases, negation', async (t) => {
  t.same(parseNarrow([['stream', 'Denmark'], { operator: 'topic', operand: 'x', negated: true }]), [
    { operator: 'stream', operand: 'Denmark', negated: false },
    { operator: 'topic', operand: 'x', negated: true },
  ]);
  t.same(parseNarrow([['channel', 'a'], ['subject', 'b'], ['pm-with', 'c@x'], ['channels', 'public'], ['-sender', '4']]).map((x) => [x.operator, x.negated]), [
    ['stream', false],
    ['topic', false],
    ['dm', false],
    ['streams', false],
    ['sender', true],
  ]);
  t.same(parseNarrow([{ operator: 'dm', operand: [4, 5] }])[0]?.operand, [4, 5]);
  t.same(parseNarrow([['id', '42']])[0]?.operand, 42);
  t.same(parseNarrow(undefined), []);
  t.same(searchTerms(parseNarrow([['search', 'a b'], { operator: 'search', operand: 'c', negated: true }])), ['a b']);
});

t.test('everything unsupported is an error, never ignored', async (t) => {
  const bad: Array<[unknown, string]> = [
    [[['in', 'home']], 'Invalid narrow operator: unknown operator in'],
    [[['is', 'muted']], "Invalid narrow operator: unknown 'is' operand muted"],
    [[['has', 'reaction']], "Invalid narrow operator: unknown 'has' operand reaction"],
    [[['streams', 'web-public']], 'Invalid narrow operator: unknown streams operand web-public'],
    [[['near', 'x']], 'Invalid narrow operator: Invalid message ID'],
    [[{ operator: 'stream', operand: { a: 1 } }], 'Invalid narrow operator: invalid operand for stream'],
    [[{ operator: 'is', operand: 5 }], 'Invalid narrow operator: invalid operand for is'],
    [[{ operator: 'stream', operand: 'x', negated: 'yes' }], 'Invalid narrow'],
    [[['stream']], 'Invalid narrow'],
    ['stream', 'Invalid narrow'],
    [[5], 'Invalid narrow'],
  ];
  for (const [narrow, msg] of bad) {
    t.throws(() => parseNarrow(narrow), { name: 'AppError', code: 'BAD_REQUEST', message: msg }, msg);
  }
});

t.test('shape limits: no narrow can make an exploding query', async (t) => {
  const streams = (n: number) => Array.from({ length: n }, (_, i) => ({ operator: 'stream', operand: `s${i}`, negated: true }));
  t.equal(parseNarrow(streams(10)).length, 10, 'ten of one operator are fine');
  t.throws(() => parseNarrow(streams(11)), { code: 'BAD_REQUEST', message: 'Invalid narrow operator: operator stream used more than 10 times' });
  const mixed = [...streams(10), ...Array.from({ length: 11 }, (_, i) => ['topic', `t${i}`])];
  t.throws(() => parseNarrow(mixed), { message: 'Invalid narrow operator: too many operators (at most 20)' });
  t.throws(() => parseNarrow(Array.from({ length: 5000 }, () => ['is', 'starred'])), { message: 'Invalid narrow operator: too many operators (at most 20)' }, 'a huge list is refused before it is parsed');
  const repeated = Array.from({ length: 50 }, () => ['streams', 'public']);
  t.same(parseNarrow(repeated), [{ operator: 'streams', operand: 'public', negated: false }], 'identical terms are merged before counting');
  t.equal(parseNarrow([['search', 'x'.repeat(1000)]]).length, 1);
  t.throws(() => parseNarrow([['search', 'x'.repeat(1001)]]), { message: 'Invalid narrow operator: search terms longer than 1000 characters' });
  const sentence = (n: number, k: number) => Array.from({ length: n }, (_, i) => `w${k}x${i}`).join(' ');
  t.equal(parseNarrow(Array.from({ length: 10 }, (_, k) => ['search', sentence(10, k)])).length, 10, 'a hundred search words in all are fine');
  t.throws(() => parseNarrow(Array.from({ length: 10 }, (_, k) => ['search', sentence(k === 0 ? 11 : 10, k)])), { message: 'Invalid narrow operator: more than 100 search words' }, 'counted over every search term');
  t.throws(() => parseNarrow([{ operator: 'search', operand: 'don’t-stop-me now', negated: true }, ['search', sentence(97, 0)]]), { message: 'Invalid narrow operator: more than 100 search words' }, 'negated terms count, and words split at punctuation');
  t.throws(() => parseNarrow([['sender', 'a,'.repeat(600)]]), { message: 'Invalid narrow operator: operand of sender longer than 1000 characters' });
  t.throws(() => parseNarrow([{ operator: 'dm', operand: Array.from({ length: 101 }, (_, i) => i + 1) }]), { message: 'Invalid narrow operator: more than 100 users for dm' });
});

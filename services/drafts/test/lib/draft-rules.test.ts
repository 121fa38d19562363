import t from 'tap';
import { directRecipients, normaliseContent, normaliseDraft, toApiDraft, truncateTopic } from '../../src/lib/draft-rules.js';

const NOW = 1_700_000_000.25;
const draft = (over: Record<string, unknown> = {}) => ({ type: 'stream' as const, to: [3], topic: 'sync', content: 'hello', ...over });
const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    const a = e as { code: string; message: string; httpStatus: number };
    return { code: a.code, msg: a.message, status: a.httpStatus };
  }
  return undefined;
};

t.test('rejects what Zulip rejects, with its messages', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a stream draft without a stream id', { to: [] }, 'Must specify exactly 1 channel ID for channel messages'],
    ['a stream draft with two stream ids', { to: [3, 4] }, 'Must specify exactly 1 channel ID for channel messages'],
    ['a NUL in the topic', { topic: 'a\u0000b' }, 'Topic must not contain null bytes'],
    ['a NUL in the content', { content: 'a\u0000b' }, 'Message must not contain null bytes'],
    ['empty content', { content: ' \n ' }, 'Message must not be empty'],
    ['a negative timestamp', { timestamp: -1 }, 'Timestamp must not be negative.'],
  ];
  for (const [name, over, msg] of cases) {
    t.same(errorOf(() => normaliseDraft(draft(over), NOW, 10)), { code: 'BAD_REQUEST', msg, status: 400 }, name);
  }
  t.same(errorOf(() => normaliseDraft(draft({ content: '\u0000', to: [] }), NOW, 10)), { code: 'BAD_REQUEST', msg: 'Message must not contain null bytes', status: 400 }, 'content is checked first, as in Zulip');
});

t.test('normalises like Zulip', async (t) => {
  const d = normaliseDraft(draft({ topic: 'x'.repeat(70) }), NOW, 10);
  t.equal(d.topic, `${'x'.repeat(57)}...`, 'a long topic is cut to 60 characters');
  t.equal(d.lastEditTime.getTime(), NOW * 1000, 'a missing timestamp is now');
  t.equal(normaliseDraft(draft({ timestamp: 1595479019 }), NOW, 10).lastEditTime.getTime(), 1595479019000);
  t.same(normaliseDraft({ type: 'private', to: [5, 10, 5, 2], topic: 'ignored', content: 'c' }, NOW, 10), { type: 'private', to: [2, 5], topic: '', content: 'c', lastEditTime: new Date(NOW * 1000) });
  t.same(normaliseDraft({ type: 'private', to: [10], topic: '', content: 'c' }, NOW, 10).to, [10], 'a draft to oneself keeps oneself');
  t.same(normaliseDraft({ type: 'private', to: [], topic: 't', content: 'c' }, NOW, 10).type, '', 'a direct draft to nobody is unaddressed');
  t.same(normaliseDraft({ type: '', to: [4], topic: 't', content: 'c' }, NOW, 10), { type: '', to: [], topic: '', content: 'c', lastEditTime: new Date(NOW * 1000) });
  t.equal(normaliseContent('\n\nhi  \n'), 'hi');
  t.equal(normaliseContent('y'.repeat(10_005)).length, 10_000);
  t.match(normaliseContent('y'.repeat(10_005)), /\n\[message truncated\]$/);
  t.equal(truncateTopic('😀'.repeat(61)), `${'😀'.repeat(57)}...`, 'characters, not UTF-16 units');
  t.same(directRecipients([3, 3], 3), [3]);
});

t.test('toApiDraft shows whole seconds', async (t) => {
  t.same(toApiDraft({ id: 1, type: 'stream', to_ids: [3], topic: 't', content: 'c', last_edit_time: new Date(1595479019_900) }), {
    id: 1,
    type: 'stream',
    to: [3],
    topic: 't',
    content: 'c',
    timestamp: 1595479019,
  });
});

import t from 'tap';
import { customEmojiCandidates } from '../../src/lib/emoji.js';

t.test('customEmojiCandidates finds every :name: a custom emoji could have', async (t) => {
  const cases: Array<[string, string[]]> = [
    ['no emoji here', []],
    [':party_time: and :green-tick:', ['party_time', 'green-tick']],
    [':a:b:', ['a', 'b']],
    ['at 10:30:00', ['30']],
    [':Capital: :semi;colon: :dotted.name: :: :x y:', []],
    [':dup: :dup:', ['dup']],
  ];
  for (const [content, want] of cases) t.same(customEmojiCandidates(content), want, content);
  const many = Array.from({ length: 150 }, (_, i) => `:e${i}:`).join(' ');
  t.equal(customEmojiCandidates(many).length, 100, 'at most 100 names are looked up');
});


import t from 'tap';
import { FLAG_BITS } from '../../src/lib/flags.js';
import { contentFacts, contentFlagBits } from '../../src/lib/mention-flags.js';

const base = { mentioned_user_ids: [] as number[], mentions_stream_wildcard: false, mentions_topic_wildcard: false, alert_words_found: [] as string[] };
const words = new Map([[1, ['Castle']], [2, ['moat']]]);
const alertWordsOf = (id: number) => words.get(id);

t.test('direct mentions flag only the mentioned user', async (t) => {
  const f = contentFacts({ ...base, mentioned_user_ids: [1] }, { alertWordsOf });
  t.equal(contentFlagBits(1, f), FLAG_BITS.mentioned);
  t.equal(contentFlagBits(2, f), 0);
});

t.test('stream wildcards flag everyone; topic wildcards only participants', async (t) => {
  const all = contentFacts({ ...base, mentions_stream_wildcard: true }, { alertWordsOf });
  t.equal(contentFlagBits(9, all), FLAG_BITS.wildcard_mentioned);
  const topic = contentFacts({ ...base, mentions_topic_wildcard: true }, { alertWordsOf, topicParticipants: [1] });
  t.equal(contentFlagBits(1, topic), FLAG_BITS.wildcard_mentioned);
  t.equal(contentFlagBits(2, topic), 0);
});

t.test('alert words flag only the users whose own words were found, case-insensitively', async (t) => {
  const f = contentFacts({ ...base, alert_words_found: ['castle'] }, { alertWordsOf });
  t.equal(contentFlagBits(1, f), FLAG_BITS.has_alert_word);
  t.equal(contentFlagBits(2, f), 0);
  t.equal(contentFlagBits(3, f), 0);
});

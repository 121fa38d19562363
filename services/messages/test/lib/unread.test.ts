import t from 'tap';
import { FLAG_BITS } from '../../src/lib/flags.js';
import { aggregateUnread, type UnreadRow } from '../../src/lib/unread.js';

const row = (r: Partial<UnreadRow> & { message_id: number }): UnreadRow => ({
  sender_id: 2,
  stream_id: null,
  topic: '',
  recipient_type: 1,
  recipient_user_ids: [1],
  flags: 0,
  muted: false,
  ...r,
});

t.test('groups unread messages as /register does and leaves muted ones out of the count', async (t) => {
  const rows = [
    row({ message_id: 1, stream_id: 10, topic: 'News', recipient_type: 2, recipient_user_ids: [] }),
    row({ message_id: 2, stream_id: 10, topic: 'news', recipient_type: 2, recipient_user_ids: [], flags: FLAG_BITS.mentioned }),
    row({ message_id: 3, stream_id: 11, topic: 'x', recipient_type: 2, recipient_user_ids: [], muted: true, flags: FLAG_BITS.wildcard_mentioned }),
    row({ message_id: 4, sender_id: 2, recipient_user_ids: [1] }),
    row({ message_id: 5, sender_id: 1, recipient_user_ids: [3] }),
    row({ message_id: 6, sender_id: 3, recipient_type: 3, recipient_user_ids: [3, 1, 2], flags: FLAG_BITS.wildcard_mentioned }),
  ];
  t.same(aggregateUnread(1, rows, false), {
    count: 5,
    pms: [
      { other_user_id: 2, sender_id: 2, unread_message_ids: [4] },
      { other_user_id: 3, sender_id: 3, unread_message_ids: [5] },
    ],
    streams: [
      { stream_id: 10, topic: 'News', unread_message_ids: [1, 2] },
      { stream_id: 11, topic: 'x', unread_message_ids: [3] },
    ],
    huddles: [{ user_ids_string: '1,2,3', unread_message_ids: [6] }],
    mentions: [2, 6],
    old_unreads_missing: false,
  });
  t.equal(aggregateUnread(1, [], true).old_unreads_missing, true);
});

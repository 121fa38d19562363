/** Zulip's emoji request rules (shared/src/emoji), used by reactions and status emoji. */
import t from 'tap';
import { checkEmojiRequest, emojiByName, isBuiltInEmojiName, parseReactionType } from '../src/emoji/index.js';

const realm = [
  { id: '7', name: 'party_time', deactivated: false },
  { id: '8', name: 'old_logo', deactivated: true },
  { id: '9', name: 'smile', deactivated: false },
];

t.test('isBuiltInEmojiName knows Unicode names and zulip', async (t) => {
  t.ok(isBuiltInEmojiName('smile'));
  t.ok(isBuiltInEmojiName('zulip'));
  t.notOk(isBuiltInEmojiName('party_time'));
});

t.test('emojiByName: the realm first, then zulip, then Unicode', async (t) => {
  t.same(emojiByName('party_time', realm), { emoji_code: '7', reaction_type: 'realm_emoji' });
  t.same(emojiByName('smile', realm), { emoji_code: '9', reaction_type: 'realm_emoji' }, 'a custom emoji overrides a built-in name');
  t.same(emojiByName('smile', []), { emoji_code: '1f642', reaction_type: 'unicode_emoji' });
  t.same(emojiByName('zulip', []), { emoji_code: 'zulip', reaction_type: 'zulip_extra_emoji' });
  t.throws(() => emojiByName('old_logo', realm), { message: "Emoji 'old_logo' does not exist", code: 'BAD_REQUEST' }, 'deactivated ones are not found by name');
  t.throws(() => emojiByName('no_such_emoji', []), { message: "Emoji 'no_such_emoji' does not exist" });
});

t.test('checkEmojiRequest: code and type must name one emoji', async (t) => {
  t.doesNotThrow(() => checkEmojiRequest('party_time', '7', 'realm_emoji', realm));
  t.doesNotThrow(() => checkEmojiRequest('smile', '1f642', 'unicode_emoji', realm));
  t.doesNotThrow(() => checkEmojiRequest('zulip', 'zulip', 'zulip_extra_emoji', []));
  const cases: Array<[string, string, string, string]> = [
    ['party_time', '70', 'realm_emoji', 'Invalid custom emoji.'],
    ['smile', '7', 'realm_emoji', 'Invalid custom emoji name.'],
    ['old_logo', '8', 'realm_emoji', 'This custom emoji has been deactivated.'],
    ['zulip', 'zulip2', 'zulip_extra_emoji', 'Invalid emoji code.'],
    ['smile', 'zulip', 'zulip_extra_emoji', 'Invalid emoji name.'],
    ['smile', 'ffff', 'unicode_emoji', 'Invalid emoji code.'],
    ['frown', '1f642', 'unicode_emoji', 'Invalid emoji name.'],
    ['smile', '1f642', 'emoji_of_sorts', 'Invalid emoji type.'],
  ];
  for (const [name, code, type, msg] of cases) t.throws(() => checkEmojiRequest(name, code, type, realm), { message: msg, code: 'BAD_REQUEST' }, msg);
});

t.test('parseReactionType accepts our spec\'s name for the extra type', async (t) => {
  t.equal(parseReactionType('service_extra_emoji'), 'zulip_extra_emoji');
  t.equal(parseReactionType('realm_emoji'), 'realm_emoji');
  t.equal(parseReactionType('other'), undefined);
});

import t, { type Test } from 'tap';
import {
  isMeMessage,
  normaliseContent,
  normaliseTopic,
  parseMessageType,
  parsePrivateTargets,
  parseStreamTarget,
  readBySenderDefault,
} from '../../src/lib/message-input.js';

const fails = (t: Test, fn: () => unknown, msg: string) =>
  t.throws(fn, { name: 'AppError', code: 'BAD_REQUEST', message: msg, httpStatus: 400 }, msg);

t.test('content: trimmed, refused when empty, truncated past 10000 bytes', async (t) => {
  t.equal(normaliseContent('\n\nhello  \n '), 'hello');
  t.equal(normaliseContent('  indented'), '  indented', 'leading spaces stay (code blocks)');
  fails(t, () => normaliseContent(' \n\t '), 'Message must not be empty');
  fails(t, () => normaliseContent('a\u0000b'), 'Message must not contain null bytes');
  t.equal(normaliseContent('a'.repeat(10000)), 'a'.repeat(10000));
  const long = normaliseContent('€'.repeat(5000)); // 15000 bytes
  t.ok(Buffer.byteLength(long) <= 10000);
  t.match(long, /^€+\n\[message truncated\]$/, 'cut on a character boundary');
});

t.test('topic: required, trimmed, truncated to 60 characters', async (t) => {
  t.equal(normaliseTopic('  castle '), 'castle');
  fails(t, () => normaliseTopic(undefined), 'Missing topic');
  fails(t, () => normaliseTopic('   '), "Topic can't be empty");
  t.equal(normaliseTopic('x'.repeat(60)), 'x'.repeat(60));
  t.equal(normaliseTopic('😀'.repeat(61)), `${'😀'.repeat(57)}...`, 'characters, not UTF-16 units');
});

t.test('message types, with the modern aliases', async (t) => {
  t.equal(parseMessageType('stream'), 'stream');
  t.equal(parseMessageType('channel'), 'stream');
  t.equal(parseMessageType('private'), 'private');
  t.equal(parseMessageType('direct'), 'private');
  fails(t, () => parseMessageType('pm'), 'Invalid message type');
});

t.test('stream targets', async (t) => {
  const cases: Array<[unknown, unknown]> = [
    ['Denmark', { name: 'Denmark' }],
    ['"Denmark"', { name: 'Denmark' }],
    ['["Denmark"]', { name: 'Denmark' }],
    ['7', { stream_id: 7 }],
    [7, { stream_id: 7 }],
    ['[7]', { stream_id: 7 }],
    ['not json {', { name: 'not json {' }],
  ];
  for (const [raw, want] of cases) t.same(parseStreamTarget(raw), want, JSON.stringify(raw));
  fails(t, () => parseStreamTarget('["a","b"]'), 'Expected exactly one channel');
  fails(t, () => parseStreamTarget('{}'), 'Invalid data type for channel');
});

t.test('direct message targets in every form', async (t) => {
  const cases: Array<[unknown, unknown]> = [
    ['[4, 5, 4]', { user_ids: [4, 5] }],
    [[4], { user_ids: [4] }],
    ['4', { user_ids: [4] }],
    ['["a@x.test", "A@x.test", "b@x.test"]', { emails: ['a@x.test', 'b@x.test'] }],
    ['a@x.test', { emails: ['a@x.test'] }],
    ['a@x.test, b@x.test', { emails: ['a@x.test', 'b@x.test'] }],
  ];
  for (const [raw, want] of cases) t.same(parsePrivateTargets(raw), want, JSON.stringify(raw));
  fails(t, () => parsePrivateTargets('[]'), 'Message must have recipients');
  fails(t, () => parsePrivateTargets('[4, "a@x.test"]'), 'Recipient lists may contain emails or user IDs, but not both.');
  fails(t, () => parsePrivateTargets('{"a": 1}'), 'Invalid data type for recipients');
});

t.test('read_by_sender default and /me', async (t) => {
  t.equal(readBySenderDefault('ZulipMobile'), true);
  t.equal(readBySenderDefault('website'), true);
  t.equal(readBySenderDefault('ZulipPython'), false);
  t.equal(readBySenderDefault('Unspecified'), false);
  t.equal(isMeMessage('/me waves'), true);
  t.equal(isMeMessage('/me waves\nagain'), false);
  t.equal(isMeMessage('/meh'), false);
});

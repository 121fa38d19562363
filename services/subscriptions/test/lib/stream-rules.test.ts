import t from 'tap';
import { AppError } from '@zc/shared/errors';
import {
  checkStreamName,
  historyPublicToSubscribers,
  normaliseDescription,
  normaliseStreamName,
  parseMessageRetentionDays,
  streamPostPolicy,
} from '../../src/lib/stream-rules.js';

const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  return undefined;
};

t.test('stream names follow Zulip’s rules', async (t) => {
  t.equal(normaliseStreamName('  Verona \t'), 'Verona', 'surrounding whitespace is trimmed');
  for (const ok of ['Verona', 'a', 'x'.repeat(60), 'Ünïcödé ✓ stream', 'emoji 🐙 counts as one']) {
    t.doesNotThrow(() => checkStreamName(ok), ok);
  }
  const cases: Array<[string, string]> = [
    ['', "Channel name can't be empty."],
    ['x'.repeat(61), 'Channel name too long (limit: 60 characters).'],
    ['bad\u0000name', 'Invalid character in channel name, at position 4.'],
    ['\u0007bell', 'Invalid character in channel name, at position 1.'],
    ['tab\there', 'Invalid character in channel name, at position 4.'],
  ];
  for (const [name, msg] of cases) {
    const e = errorOf(() => checkStreamName(name));
    t.match(e, { code: 'BAD_REQUEST', message: msg, httpStatus: 400 }, JSON.stringify(name));
  }
  t.doesNotThrow(() => checkStreamName('🐙'.repeat(60)), 'length is counted in code points, not UTF-16 units');
});

t.test('descriptions are capped at 1024 characters and kept on one line', async (t) => {
  t.equal(normaliseDescription(undefined, 0), '');
  t.equal(normaliseDescription('two\nlines', 0), 'two lines');
  t.equal(normaliseDescription('d'.repeat(1024), 0).length, 1024);
  t.match(errorOf(() => normaliseDescription('d'.repeat(1025), 2)), {
    code: 'BAD_REQUEST',
    message: 'subscriptions[2]["description"] is too long (limit: 1024 characters)',
  });
});

t.test('message_retention_days', async (t) => {
  t.equal(parseMessageRetentionDays('realm_default'), null);
  t.equal(parseMessageRetentionDays('unlimited'), -1);
  t.equal(parseMessageRetentionDays('forever'), -1, 'the name before feature level 91');
  t.equal(parseMessageRetentionDays(30), 30);
  t.equal(parseMessageRetentionDays('30'), 30);
  for (const bad of [0, -5, 'never', '1.5']) {
    t.match(errorOf(() => parseMessageRetentionDays(bad)), {
      code: 'REQUEST_VARIABLE_INVALID',
      message: `Bad value for 'message_retention_days': ${bad}`,
      data: { var_name: 'message_retention_days', bad_value: bad },
    });
  }
});

t.test('history defaults: always public for public streams, private unless asked for private ones', async (t) => {
  t.equal(historyPublicToSubscribers(false, undefined), true);
  t.equal(historyPublicToSubscribers(false, false), true);
  t.equal(historyPublicToSubscribers(true, undefined), false);
  t.equal(historyPublicToSubscribers(true, true), true);
});

t.test('stream_post_policy and the is_announcement_only alias', async (t) => {
  t.equal(streamPostPolicy(undefined, undefined), 1);
  t.equal(streamPostPolicy(undefined, true), 2);
  t.equal(streamPostPolicy(4, true), 4, 'the policy wins over the alias');
  t.match(errorOf(() => streamPostPolicy(5, undefined)), { code: 'BAD_REQUEST', message: 'Invalid stream_post_policy' });
});

/** The modern answer's serialised blocks: always what serialising the listed entries gives, rejoined only where needed. */
import t from 'tap';
import { PRESENCE_TIMING } from '../src/contracts/index.js';
import { modernRealmMembers, modernRealmPresence, modernRealmPresences, type PresenceEntry } from '../src/presence/index.js';

const NOW_S = 1_800_000_000;
const WINDOW_S = PRESENCE_TIMING.historyLimitDays * 86_400;

const entry = (userId: number, idleTs: number, updateId = userId): PresenceEntry => ({ userId, activeTs: idleTs - 5, idleTs, updateId });

/** The answer's `presences` and last update id as a client reads them. */
function answer(copy: object, entries: PresenceEntry[], nowS: number) {
  const { blocks, lastUpdateId } = modernRealmMembers(copy, entries, nowS * 1000);
  return { presences: JSON.parse(`{${blocks.map((b) => b.toString()).join(',')}}`) as unknown, lastUpdateId, blocks };
}

/** What the answer must be: the per-entry way of the shared view. */
function expected(entries: PresenceEntry[], nowS: number) {
  const a = modernRealmPresence({ realmDisabled: false, lastUpdateId: -1, entries }, { slim_presence: true }, nowS * 1000);
  return { presences: a.presences, lastUpdateId: a.presence_last_update_id };
}

t.test('the blocks serialise every listed entry, as the per-entry answer does', async (t) => {
  const entries = Array.from({ length: 150 }, (_, i) => entry(i + 1, NOW_S - i * 60));
  const got = answer({}, entries, NOW_S);
  t.same({ presences: got.presences, lastUpdateId: got.lastUpdateId }, expected(entries, NOW_S));
  t.equal(got.blocks.length, 3, '150 entries in blocks of 64');
  const none = answer({}, [], NOW_S);
  t.same({ presences: none.presences, lastUpdateId: none.lastUpdateId }, { presences: {}, lastUpdateId: -1 }, 'an empty realm');
});

t.test('an updated entry rejoins its block only', async (t) => {
  const copy = {};
  const entries = Array.from({ length: 150 }, (_, i) => entry(i + 1, NOW_S - i * 60));
  const before = answer(copy, entries, NOW_S);
  // The reader replaces an updated entry by a new object in the same place.
  entries[70] = entry(71, NOW_S + 30, 500);
  const after = answer(copy, entries, NOW_S + 30);
  t.same({ presences: after.presences, lastUpdateId: after.lastUpdateId }, expected(entries, NOW_S + 30));
  t.equal(after.lastUpdateId, 500);
  t.equal(after.blocks[0], before.blocks[0], 'an untouched block is reused as it was');
  t.not(after.blocks[1], before.blocks[1], 'the updated entry’s block is joined again');
  t.equal(after.blocks[2], before.blocks[2]);
  const other = answer({}, entries, NOW_S + 30);
  t.not(other.blocks[0], before.blocks[0], 'another copy has blocks of its own');
});

t.test('an entry leaves the answer once it is older than the window, and new entries join it', async (t) => {
  const copy = {};
  const entries = [entry(1, NOW_S), entry(2, NOW_S - WINDOW_S + 10), entry(3, NOW_S - WINDOW_S - 1)];
  t.same(Object.keys(answer(copy, entries, NOW_S).presences as object), ['1', '2'], 'older than the window: not listed');
  const later = answer(copy, entries, NOW_S + 11);
  t.same({ presences: later.presences, lastUpdateId: later.lastUpdateId }, expected(entries, NOW_S + 11));
  t.same(Object.keys(later.presences as object), ['1'], 'user 2 left the window with time alone');
  entries.push(entry(4, NOW_S + 11, 9));
  const grown = answer(copy, entries, NOW_S + 11);
  t.same({ presences: grown.presences, lastUpdateId: grown.lastUpdateId }, expected(entries, NOW_S + 11));
});

t.test('the joined member is kept for the copy’s revision while nobody may leave the window', async (t) => {
  const copy = {};
  const entries = [entry(1, NOW_S), entry(2, NOW_S - WINDOW_S + 10), entry(3, NOW_S - WINDOW_S - 1)];
  const member = (revision: number, nowS: number) => modernRealmPresences(copy, revision, entries, nowS * 1000);
  const parsed = (m: { bytes: Buffer; lastUpdateId: number }) => ({ presences: (JSON.parse(`{${m.bytes.toString()}}`) as { presences: unknown }).presences, lastUpdateId: m.lastUpdateId });
  const first = member(0, NOW_S);
  t.same(parsed(first), expected(entries, NOW_S));
  t.equal(member(0, NOW_S + 5).bytes, first.bytes, 'same revision, same second range: the very bytes');
  entries[0] = entry(1, NOW_S + 5, 7);
  t.equal(member(0, NOW_S + 5).bytes, first.bytes, 'an entry replaced without a new revision is not seen (the reader bumps it)');
  const bumped = member(1, NOW_S + 5);
  t.not(bumped.bytes, first.bytes);
  t.same(parsed(bumped), expected(entries, NOW_S + 5), 'a new revision is joined again');
  const later = member(1, NOW_S + 11);
  t.same(parsed(later), expected(entries, NOW_S + 11), 'user 2 left the window with time alone, at the same revision');
  t.same(Object.keys(parsed(later).presences as object), ['1']);
  t.same(parsed(member(1, NOW_S)), expected(entries, NOW_S), 'a clock set back is joined again too');
  t.same(parsed(modernRealmPresences({}, 0, [], NOW_S * 1000)), { presences: {}, lastUpdateId: -1 }, 'an empty realm');
});

/** The legacy answer's member kept per copy revision and display emails: always what building it afresh gives. */
import t from 'tap';
import { PRESENCE_TIMING } from '../src/contracts/index.js';
import { PresencePeople, legacyPresenceText, legacyRealmPresences, type PresenceEntry } from '../src/presence/index.js';

const NOW_S = 1_800_000_000;
const WINDOW_S = PRESENCE_TIMING.historyLimitDays * 86_400;
const REALM = 3;

const entry = (userId: number, idleTs: number, updateId = userId): PresenceEntry => ({ userId, activeTs: idleTs - 5, idleTs, updateId });

t.test('kept while the revision, the emails and the window allow; else made again, as afresh', async (t) => {
  const people = new PresencePeople();
  let loads = 0;
  const addresses = new Map<number, string | null>([
    [1, 'one@example.com'],
    [2, 'two@example.com'],
    [3, 'three@example.com'],
    [4, null],
  ]);
  const load = async (ids: readonly number[]) => {
    loads++;
    return new Map(ids.map((id) => [id, addresses.get(id) ?? null]));
  };
  const copy = {};
  const entries = [entry(1, NOW_S), entry(2, NOW_S - WINDOW_S + 10), entry(3, NOW_S - WINDOW_S - 1), entry(4, NOW_S, 9)];
  const member = (revision: number, nowS: number, token = 'a') => legacyRealmPresences(copy, revision, entries, { copy: people, realmId: REALM, token, load }, nowS * 1000);
  const parsed = (m: { bytes: Buffer; lastUpdateId: number }) => ({ presences: (JSON.parse(`{${m.bytes.toString()}}`) as { presences: unknown }).presences, lastUpdateId: m.lastUpdateId });
  const afresh = async (nowS: number, token = 'a') => {
    const text = await legacyPresenceText({ realmDisabled: false, lastUpdateId: -1, entries }, { slim_presence: false }, { copy: new PresencePeople(), realmId: REALM, token, load }, nowS * 1000);
    const a = JSON.parse(text) as { presences: unknown; presence_last_update_id: number };
    return { presences: a.presences, lastUpdateId: a.presence_last_update_id };
  };

  const first = await member(0, NOW_S);
  t.same(parsed(first), await afresh(NOW_S));
  t.same(Object.keys(parsed(first).presences as object), ['one@example.com', 'two@example.com'], 'unlisted users (no email, out of the window) left out');
  t.equal(parsed(first).lastUpdateId, 9, 'the newest entry in the window counts, listed by email or not');
  loads = 0;
  t.equal((await member(0, NOW_S + 5)).bytes, first.bytes, 'same revision and emails: the very bytes');
  t.equal(loads, 0, 'no email asked for');

  entries[0] = entry(1, NOW_S + 5, 20);
  const bumped = await member(1, NOW_S + 5);
  t.not(bumped.bytes, first.bytes);
  t.same(parsed(bumped), await afresh(NOW_S + 5), 'a new revision is made again');

  addresses.set(1, 'uno@example.com');
  const renamed = await member(1, NOW_S + 5, 'b');
  t.same(parsed(renamed), await afresh(NOW_S + 5, 'b'), 'a new people token: emails read again and the member made again');
  t.ok(Object.keys(parsed(renamed).presences as object).includes('uno@example.com'));

  const later = await member(1, NOW_S + 11, 'b');
  t.same(parsed(later), await afresh(NOW_S + 11, 'b'), 'user 2 left the window with time alone, at the same revision');
  t.notOk(Object.keys(parsed(later).presences as object).includes('two@example.com'));
  t.same(parsed(await member(1, NOW_S, 'b')), await afresh(NOW_S, 'b'), 'a clock set back is made again too');
  t.same(parsed(await legacyRealmPresences({}, 0, [], { copy: people, realmId: REALM, token: 'b', load }, NOW_S * 1000)), { presences: {}, lastUpdateId: -1 }, 'an empty realm');
});

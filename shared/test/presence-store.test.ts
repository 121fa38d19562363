/** The presence store against real Redis: Zulip's timing rules, visibility and its loading. */
import t from 'tap';
import { PRESENCE_TIMING } from '../src/contracts/index.js';
import { RedisBatch, createRedis } from '../src/redis/index.js';
import { testEnv } from '../src/testing/index.js';
import { randomUUID } from 'node:crypto';
import { LuaScript } from '../src/presence/lua.js';
import { PresenceReader, PresenceStore, presencePeopleToken, renewPresencePeopleToken } from '../src/presence/index.js';

t.test('presence store', async (t) => {
  const env = await testEnv(t);
  const redis = createRedis(env.infra.redisUrl);
  t.teardown(() => redis.disconnect());
  const store = new PresenceStore(redis, env.prefix);
  const REALM = 7;
  const T0 = 1_800_000_000;
  const ping = (user: number, active: boolean, at: number) => store.ping(REALM, user, active, at, PRESENCE_TIMING);

  t.test('nothing is recorded before the visibility is loaded', async (t) => {
    t.same(await ping(1, true, T0), { kind: 'unloaded' });
    t.equal(await store.read(REALM), undefined);
    t.equal(await store.readOne(REALM, 1), undefined);
    const gen = await store.visibilityGeneration(REALM);
    t.ok(await store.loadVisibility(REALM, gen, false, [3]));
  });

  t.test('the first ping creates the entry and counts as coming online', async (t) => {
    const r = await ping(1, true, T0);
    t.match(r, { kind: 'recorded', changed: true, cameOnline: true, realmDisabled: false, entry: { userId: 1, activeTs: T0, idleTs: T0 } });
    const idleFirst = await ping(2, false, T0);
    t.match(idleFirst, { kind: 'recorded', cameOnline: true, entry: { activeTs: 0, idleTs: T0 } }, 'an idle first ping records no activity');
  });

  t.test('pings closer than the minimum frequency change nothing', async (t) => {
    const before = await store.readOne(REALM, 1);
    const r = await ping(1, true, T0 + PRESENCE_TIMING.updateMinFrequencySeconds);
    t.match(r, { kind: 'recorded', changed: false, cameOnline: false });
    t.same(await store.readOne(REALM, 1), before);
  });

  t.test('an idle ping moves only the connection time; a later active ping comes back online', async (t) => {
    const idle = await ping(1, false, T0 + 100);
    t.match(idle, { changed: true, cameOnline: false, entry: { activeTs: T0, idleTs: T0 + 100 } });
    const stillIdle = await ping(1, false, T0 + 160);
    t.match(stillIdle, { changed: true, cameOnline: false, entry: { activeTs: T0, idleTs: T0 + 160 } });
    const back = await ping(1, true, T0 + 230);
    t.match(back, { changed: true, cameOnline: true, entry: { activeTs: T0 + 230, idleTs: T0 + 230 } }, 'idle (legacy status) to active is an event');
  });

  t.test('an active user who keeps pinging never comes online again; one back from offline does', async (t) => {
    const steady = await ping(1, true, T0 + 290);
    t.match(steady, { changed: true, cameOnline: false });
    const late = T0 + 290 + PRESENCE_TIMING.offlineThresholdSeconds + 1;
    t.match(await ping(1, true, late), { cameOnline: true, entry: { activeTs: late, idleTs: late } });
  });

  t.test('update ids grow with every change and start above anything issued before a lost dataset', async (t) => {
    const all = await store.read(REALM);
    const ids = all?.entries.map((e) => e.updateId) ?? [];
    t.ok(ids.every((id) => id > T0 * 1000), 'seeded from the clock');
    t.equal(all?.lastUpdateId, Math.max(...ids));
    const r = await ping(2, true, T0 + 1000);
    t.ok(r.kind === 'recorded' && r.entry.updateId === (all?.lastUpdateId ?? 0) + 1);
  });

  t.test('hidden users are neither recorded nor listed; showing them again lists their old entry', async (t) => {
    t.same(await ping(3, true, T0), { kind: 'hidden' });
    t.equal(await store.readOne(REALM, 3), null);
    await store.setHidden(REALM, 1, true);
    t.same(await ping(1, true, T0 + 2000), { kind: 'hidden' });
    t.notOk((await store.read(REALM))?.entries.some((e) => e.userId === 1), 'gone from the realm list');
    t.equal(await store.readOne(REALM, 1), null);
    await store.setHidden(REALM, 1, false);
    t.match(await store.readOne(REALM, 1), { userId: 1 });
  });

  t.test('a reader keeps its copy of the realm current with what changed since', async (t) => {
    const reader = new PresenceReader(store);
    const other = new PresenceReader(store);
    const visible = async () => ((await store.read(REALM))?.entries ?? []).sort((x, y) => x.userId - y.userId);
    const copyOf = async (r: PresenceReader) => {
      const v = await r.read(REALM);
      return v && !v.disabled ? [...v.entries].sort((x, y) => x.userId - y.userId) : v;
    };
    t.same(await copyOf(reader), await visible(), 'first read: the whole realm');
    const since = await store.readSince(REALM, '', -1);
    t.equal(since?.kind, 'full');
    const held = since as { base: string; seq: number };
    await ping(6, true, T0 + 2600);
    const delta = await store.readSince(REALM, held.base, held.seq);
    t.match(delta, { kind: 'delta', base: held.base, entries: [{ userId: 6, activeTs: T0 + 2600 }] }, 'then only what changed');
    t.match(delta, { peopleToken: '' }, 'no people token yet');
    await renewPresencePeopleToken(redis, env.prefix, REALM);
    const token = await presencePeopleToken(redis, env.prefix, REALM);
    t.not(token, '');
    t.match(await store.readSince(REALM, held.base, held.seq), { kind: 'delta', peopleToken: token }, 'the renewed people token comes with the entries');
    t.same(await copyOf(reader), await visible(), 'the copy follows pings');
    await store.setHidden(REALM, 6, true);
    t.equal((await store.readSince(REALM, held.base, held.seq))?.kind, 'full', 'a visibility change makes readers read it whole');
    t.same(await copyOf(reader), await visible(), 'a hidden user leaves the copy');
    t.notOk(((await copyOf(reader)) as Array<{ userId: number }>).some((e) => e.userId === 6));
    await store.setHidden(REALM, 6, false);
    await ping(7, true, T0 + 2700);
    await store.forgetUser(REALM, 7);
    t.same(await copyOf(reader), await visible(), 'a forgotten user leaves the copy');
    t.same(await copyOf(other), await visible(), 'readers are independent');
    await store.setRealmDisabled(REALM, true);
    t.same(await reader.read(REALM), { disabled: true });
    await store.setRealmDisabled(REALM, false);
    t.same(await copyOf(reader), await visible());
    t.equal(await reader.read(12), undefined, 'an unloaded realm is left to the loader');
  });

  t.test('a realm with presence disabled still records pings but says so', async (t) => {
    await store.setRealmDisabled(REALM, true);
    t.match(await ping(2, true, T0 + 3000), { kind: 'recorded', realmDisabled: true });
    t.match(await store.read(REALM), { realmDisabled: true });
    t.equal(await store.readOne(REALM, 2), null);
    await store.setRealmDisabled(REALM, false);
  });

  t.test('a load read before a visibility change is refused', async (t) => {
    const OTHER = 8;
    const gen = await store.visibilityGeneration(OTHER);
    await store.setHidden(OTHER, 5, true);
    t.notOk(await store.loadVisibility(OTHER, gen, false, []), 'stale load refused');
    t.ok(await store.loadVisibility(OTHER, await store.visibilityGeneration(OTHER), false, [5]));
    t.same(await store.ping(OTHER, 5, true, T0, PRESENCE_TIMING), { kind: 'hidden' });
  });

  t.test('a quiet-only ping writes a steady ping but leaves one that comes online untouched', async (t) => {
    const QUIET = 9;
    t.ok(await store.loadVisibility(QUIET, await store.visibilityGeneration(QUIET), false, []));
    const quiet = (user: number, active: boolean, at: number) => store.ping(QUIET, user, active, at, PRESENCE_TIMING, true);
    t.same(await quiet(1, true, T0), { kind: 'announce' }, 'a first ping comes online');
    t.equal(await store.readOne(QUIET, 1), null, 'and was not written');
    t.match(await store.ping(QUIET, 1, true, T0, PRESENCE_TIMING), { kind: 'recorded', cameOnline: true }, 'the users service records it');
    t.match(await quiet(1, true, T0 + 60), { kind: 'recorded', changed: true, cameOnline: false, entry: { activeTs: T0 + 60, idleTs: T0 + 60 } }, 'the next minute is written');
    t.match(await quiet(1, false, T0 + 120), { kind: 'recorded', changed: true, entry: { activeTs: T0 + 60, idleTs: T0 + 120 } }, 'going idle too');
    const back = T0 + 120 + PRESENCE_TIMING.offlineThresholdSeconds + 1;
    t.same(await quiet(1, true, back), { kind: 'announce' }, 'back from offline comes online');
    t.match(await store.readOne(QUIET, 1), { activeTs: T0 + 60, idleTs: T0 + 120 }, 'unchanged');
    await store.setHidden(QUIET, 1, true);
    t.same(await quiet(1, true, back), { kind: 'hidden' });
    t.same(await store.ping(10, 1, true, T0, PRESENCE_TIMING, true), { kind: 'unloaded' }, 'an unloaded realm is left to the loader');
  });

  t.test('a ping expecting keys to hold given values writes nothing, before anything else, when one does not', async (t) => {
    const GUARDED = 11;
    const [user, realm] = [`${env.prefix}:expect:user`, `${env.prefix}:expect:realm`];
    await redis.set(user, 'u1');
    const expect = (values: [string, string]) => ({ keys: [user, realm], values });
    const guarded = (values: [string, string], at: number) => store.ping(GUARDED, 1, true, at, PRESENCE_TIMING, true, expect(values));
    t.same(await guarded(['u0', ''], T0), { kind: 'unexpected' }, 'checked before the unloaded visibility');
    t.same(await guarded(['u1', ''], T0), { kind: 'unloaded' }, 'a missing key matches the empty value');
    t.ok(await store.loadVisibility(GUARDED, await store.visibilityGeneration(GUARDED), false, []));
    t.match(await store.ping(GUARDED, 1, true, T0, PRESENCE_TIMING), { kind: 'recorded', cameOnline: true });
    t.match(await guarded(['u1', ''], T0 + 60), { kind: 'recorded', changed: true, entry: { activeTs: T0 + 60 } }, 'written when every key holds its value');
    await redis.set(realm, 'r2');
    t.same(await guarded(['u1', ''], T0 + 120), { kind: 'unexpected' }, 'a key that moved');
    t.same(await guarded(['u1', 'r'], T0 + 120), { kind: 'unexpected' }, 'another value');
    t.match(await store.readOne(GUARDED, 1), { activeTs: T0 + 60, idleTs: T0 + 60 }, 'nothing written by a refused ping');
    t.match(await guarded(['u1', 'r2'], T0 + 120), { kind: 'recorded', entry: { activeTs: T0 + 120 } });
  });

  t.test('coalesced pings share a round trip and each gets its own outcome', async (t) => {
    const COALESCED = 13;
    const windowed = new PresenceStore(redis, env.prefix, { pingWindowMs: 30 });
    const [user, realm] = [`${env.prefix}:coalesced:user`, `${env.prefix}:coalesced:realm`];
    await redis.set(user, 'u1');
    const expect = (values: [string, string]) => ({ keys: [user, realm], values });
    const ping = (id: number, at: number, values: [string, string] = ['u1', '']) => windowed.ping(COALESCED, id, true, at, PRESENCE_TIMING, true, expect(values), true);
    t.same(await ping(1, T0), { kind: 'unloaded' });
    t.ok(await windowed.loadVisibility(COALESCED, await windowed.visibilityGeneration(COALESCED), false, [3]));
    for (const id of [1, 2]) t.match(await windowed.ping(COALESCED, id, true, T0, PRESENCE_TIMING), { kind: 'recorded', cameOnline: true });
    const outcomes = await Promise.all([ping(1, T0 + 60), ping(2, T0 + 60, ['u0', '']), ping(3, T0 + 60), ping(4, T0 + 60)]);
    t.match(outcomes[0], { kind: 'recorded', changed: true, entry: { userId: 1, activeTs: T0 + 60 } }, 'a steady ping is written');
    t.same(outcomes[1], { kind: 'unexpected' }, 'a ping whose credentials moved is refused alone');
    t.same(outcomes[2], { kind: 'hidden' }, 'a hidden user');
    t.same(outcomes[3], { kind: 'announce' }, 'a user coming online is left to the users service');
    t.match(await windowed.readOne(COALESCED, 1), { activeTs: T0 + 60 });
    t.match(await windowed.readOne(COALESCED, 2), { activeTs: T0 }, 'nothing written for the refused ping');
    t.equal(await windowed.readOne(COALESCED, 4), null);
  });

  t.test('a fetch’s ping and read go in one script once a copy is held: the read sees the ping, a refused ping reads nothing', async (t) => {
    const BOTH = 14;
    const reader = new PresenceReader(store);
    const credential = `${env.prefix}:both:user`;
    await redis.set(credential, 'u1');
    const fetchPing = (userId: number, at: number, active = true, token = 'u1') => ({ userId, active, nowSeconds: at, rules: PRESENCE_TIMING, quietOnly: true, expect: { keys: [credential], values: [token] } });
    const listed = (v: Awaited<ReturnType<PresenceReader['read']>>) => (v && !v.disabled ? Object.fromEntries([...v.entries].map((e) => [e.userId, [e.activeTs, e.idleTs]])) : v);
    t.equal(await reader.pingThenRead(BOTH, fetchPing(1, T0)), undefined, 'no copy held: the caller pings and reads on its own');
    t.equal(await reader.read(BOTH), undefined, 'an unloaded realm holds no copy');
    t.ok(await store.loadVisibility(BOTH, await store.visibilityGeneration(BOTH), false, [3]));
    for (const id of [1, 2]) await store.ping(BOTH, id, true, T0, PRESENCE_TIMING);
    const first = await reader.read(BOTH);
    t.same(listed(first), { 1: [T0, T0], 2: [T0, T0] });

    const mine = await reader.pingThenRead(BOTH, fetchPing(1, T0 + 60));
    t.match(mine?.ping, { kind: 'recorded', changed: true, entry: { userId: 1, activeTs: T0 + 60 } });
    t.same(listed(mine?.view), { 1: [T0 + 60, T0 + 60], 2: [T0, T0] }, 'the read includes the ping');
    const rev = (v: Awaited<ReturnType<PresenceReader['read']>> | undefined) => (v && !v.disabled ? { copy: v.copy, revision: v.revision } : undefined);
    t.equal(rev(mine?.view)?.copy, rev(first)?.copy, 'the copy was extended');
    t.ok((rev(mine?.view)?.revision ?? 0) > (rev(first)?.revision ?? 0), 'and its revision moved');

    await store.ping(BOTH, 2, false, T0 + 70, PRESENCE_TIMING);
    const after = await reader.pingThenRead(BOTH, fetchPing(1, T0 + 80));
    t.match(after?.ping, { kind: 'recorded', changed: false });
    t.same(listed(after?.view), { 1: [T0 + 60, T0 + 60], 2: [T0, T0 + 70] }, 'another process’s ping answered before the fetch is in it');
    const again = await reader.pingThenRead(BOTH, fetchPing(1, T0 + 90));
    t.same(rev(again?.view), rev(after?.view), 'nothing changed: same copy, same revision');

    t.same(await reader.pingThenRead(BOTH, fetchPing(1, T0 + 200, true, 'u0')), { ping: { kind: 'unexpected' } }, 'credentials moved: nothing written, nothing read');
    t.match(await store.readOne(BOTH, 1), { activeTs: T0 + 60 });
    t.same(await reader.pingThenRead(BOTH, fetchPing(4, T0 + 200)), { ping: { kind: 'announce' } }, 'coming online is left to the users service');
    t.equal(await store.readOne(BOTH, 4), null);
    const hidden = await reader.pingThenRead(BOTH, fetchPing(3, T0 + 200));
    t.same(hidden?.ping, { kind: 'hidden' });
    t.same(listed(hidden?.view), { 1: [T0 + 60, T0 + 60], 2: [T0, T0 + 70] }, 'a hidden user still reads, unlisted');
    await store.setHidden(BOTH, 2, true);
    t.same(listed((await reader.pingThenRead(BOTH, fetchPing(1, T0 + 210)))?.view), { 1: [T0 + 210, T0 + 210] }, 'a visibility change: read whole, with the ping');
    await store.setRealmDisabled(BOTH, true);
    const disabled = await reader.pingThenRead(BOTH, fetchPing(1, T0 + 220));
    t.match(disabled, { ping: { kind: 'recorded', realmDisabled: true }, view: { disabled: true } });
    t.equal(await reader.pingThenRead(BOTH, fetchPing(1, T0 + 230)), undefined, 'a disabled realm holds no copy');
  });

  t.test('reads that find no copy share one whole read, then ask for what changed since', async (t) => {
    const SHARED = 12;
    t.ok(await store.loadVisibility(SHARED, await store.visibilityGeneration(SHARED), false, []));
    for (const user of [1, 2, 3]) await store.ping(SHARED, user, true, T0, PRESENCE_TIMING);
    const kinds: string[] = [];
    const counting = Object.create(store) as PresenceStore;
    counting.readSince = async (...args: Parameters<PresenceStore['readSince']>) => {
      const r = await store.readSince(...args);
      kinds.push(r?.kind ?? 'unloaded');
      return r;
    };
    const reader = new PresenceReader(counting);
    const ids = (v: Awaited<ReturnType<PresenceReader['read']>>) => (v && !v.disabled ? [...v.entries].map((e) => e.userId).sort() : v);
    const first = reader.read(SHARED);
    // Written after the whole read was sent: the reads that wait for it must still see it.
    await store.ping(SHARED, 4, true, T0, PRESENCE_TIMING);
    const views = await Promise.all([first, reader.read(SHARED), reader.read(SHARED)]);
    t.same(kinds.sort(), ['delta', 'delta', 'full'], 'one whole read');
    t.same(ids(views[1]), [1, 2, 3, 4], 'a read started after a ping sees it');
    t.same(ids(views[2]), [1, 2, 3, 4]);
  });

  t.test('a reader keeps at most its entry budget, dropping the realms read least recently', async (t) => {
    const A = 13;
    const B = 14;
    for (const realm of [A, B]) {
      t.ok(await store.loadVisibility(realm, await store.visibilityGeneration(realm), false, []));
      for (const user of [1, 2, 3]) await store.ping(realm, user, true, T0, PRESENCE_TIMING);
    }
    const asked: Array<[number, string]> = [];
    const spy = Object.create(store) as PresenceStore;
    spy.readSince = (realmId, base, seq) => {
      asked.push([realmId, base]);
      return store.readSince(realmId, base, seq);
    };
    const reader = new PresenceReader(spy, 4);
    await reader.read(A);
    await reader.read(A);
    t.not(asked[1]?.[1], '', 'a kept copy is brought up to date');
    await reader.read(B);
    await reader.read(A);
    t.same(asked.slice(2).map(([realm, base]) => [realm, base === '']), [[B, true], [A, true]], 'six entries over a budget of four: A was dropped when B was read');
    const v = await reader.read(A);
    t.equal(v && !v.disabled ? [...v.entries].length : -1, 3, 'the realm just read is kept whatever its size');
  });

  t.test('a script Redis has never seen is loaded on first use, then run by its SHA1', async (t) => {
    const script = new LuaScript(`-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1]}`, 1);
    t.same(await script.run(redis, 'k', 'v'), ['k', 'v'], 'NOSCRIPT, then EVAL');
    t.same(await script.run(redis, 'k2', 'v2'), ['k2', 'v2'], 'EVALSHA');
    await t.rejects(new LuaScript('return redis.call("NOSUCHCOMMAND")', 0).run(redis), /Unknown Redis command|unknown command/i, 'other errors are thrown');
  });

  t.test('scripts run in a batch share its write and are loaded there too on first use', async (t) => {
    const batch = new RedisBatch(redis);
    const unknown = new LuaScript(`-- ${randomUUID()}\nreturn {KEYS[1], ARGV[1]}`, 1);
    const known = new LuaScript(`-- ${randomUUID()}\nreturn ARGV[1]`, 0);
    await known.run(redis, 'loaded');
    const both = await Promise.all([unknown.inBatch(batch, redis, 1, ['k', 'v']), known.inBatch(batch, redis, 0, ['w'])]);
    t.same(both, [['k', 'v'], 'w'], 'NOSCRIPT in the batch, then EVAL on its own; the other ran in the batch');
    t.same(await unknown.inBatch(batch, redis, 1, ['k2', 'v2']), ['k2', 'v2'], 'EVALSHA in the batch');
    await t.rejects(new LuaScript('return redis.call("NOSUCHCOMMAND")', 0).inBatch(batch, redis, 0, []), /Unknown Redis command|unknown command/i, 'other errors are thrown');
  });

  t.test('forgetUser drops the entry', async (t) => {
    await store.forgetUser(REALM, 2);
    t.equal(await store.readOne(REALM, 2), null);
  });
});

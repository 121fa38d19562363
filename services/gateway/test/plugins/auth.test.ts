/** The pure parts of Basic authentication: the per-replica credential cache and Zulip's client name. */
import t from 'tap';
import type { FastifyRequest } from 'fastify';
import type { Actor } from '@zc/shared/contracts';
import { AuthCache, clientNameOf } from '../../src/plugins/auth.js';

const actor = (user_id: number, realm_id = 1): Actor => ({ realm_id, user_id, role: 400, email: `u${user_id}@zulip.test`, full_name: `U${user_id}`, is_bot: false });

t.test('AuthCache', async (t) => {
  t.test('keys: the email is case-insensitive, the key and the realm are not', async (t) => {
    const c = new AuthCache(1000);
    const k = c.key('', 'Hamlet@Zulip.test', 'KEY1');
    t.equal(c.key('', 'hamlet@zulip.test', 'KEY1'), k);
    t.not(c.key('', 'hamlet@zulip.test', 'key1'), k, 'API keys are case-sensitive');
    t.not(c.key('other', 'hamlet@zulip.test', 'KEY1'), k, 'another realm is another entry');
    t.notMatch(k, /KEY1/, 'the key itself is not kept, only its hash');
  });

  t.test('an entry lives for its TTL', async (t) => {
    const c = new AuthCache(40);
    const k = c.key('', 'a@zulip.test', 'k');
    t.equal(c.get(k), undefined);
    c.set(k, actor(7));
    t.same(c.get(k)?.actor, actor(7));
    await new Promise((r) => setTimeout(r, 60));
    t.equal(c.get(k), undefined, 'expired');
  });

  t.test('a TTL of 0 caches nothing', async (t) => {
    const c = new AuthCache(0);
    const k = c.key('', 'a@zulip.test', 'k');
    c.set(k, actor(1));
    t.equal(c.get(k), undefined);
  });

  t.test('dropUser and dropRealm forget every entry of theirs, and only those', async (t) => {
    const c = new AuthCache(60_000);
    const entries = [
      [c.key('', 'a@zulip.test', 'k1'), actor(1, 1)],
      [c.key('', 'a@zulip.test', 'k2'), actor(1, 1)],
      [c.key('', 'b@zulip.test', 'k3'), actor(2, 1)],
      [c.key('x', 'c@zulip.test', 'k4'), actor(3, 2)],
    ] as const;
    for (const [k, a] of entries) c.set(k, a);
    c.dropUser(1);
    t.same(entries.map(([k]) => c.get(k)?.actor.user_id), [undefined, undefined, 2, 3]);
    c.dropRealm(1);
    t.same(entries.map(([k]) => c.get(k)?.actor.user_id), [undefined, undefined, undefined, 3]);
    c.dropUser(99);
    t.equal(c.get(entries[3][0])?.actor.user_id, 3, 'unknown ids change nothing');
  });

  t.test('when full, the oldest entry makes room', async (t) => {
    const c = new AuthCache(60_000, 2);
    const [k1, k2, k3] = ['k1', 'k2', 'k3'].map((x) => c.key('', 'a@zulip.test', x)) as [string, string, string];
    c.set(k1, actor(1));
    c.set(k2, actor(2));
    c.set(k3, actor(3));
    t.equal(c.get(k1), undefined, 'evicted');
    t.equal(c.get(k2)?.actor.user_id, 2);
    t.equal(c.get(k3)?.actor.user_id, 3);
  });

  const basic = (email: string, apiKey: string) => `Basic ${Buffer.from(`${email}:${apiKey}`).toString('base64')}`;

  t.test('headerKey: the key of the decoded header, then the same key found by the digest alone', async (t) => {
    const c = new AuthCache(60_000);
    const header = basic('Hamlet@Zulip.test', 'KEY1');
    const first = c.headerKey('', header);
    t.equal(first.key, c.key('', 'hamlet@zulip.test', 'KEY1'));
    t.same(first.credentials, { email: 'Hamlet@Zulip.test', apiKey: 'KEY1' }, 'decoded the first time');
    t.same(c.headerKey('', header), { key: first.key }, 'found again without decoding');
    t.equal(c.headerKey('', basic('hamlet@zulip.test', 'KEY1')).key, first.key, 'another header of the same credentials: the same entry');
    t.not(c.headerKey('other', header).key, first.key, 'another realm is another entry');
    t.not(c.headerKey('', basic('Hamlet@Zulip.test', 'key1')).key, first.key);
    const kept = JSON.stringify([...(c as unknown as { headerKeys: Map<string, string> }).headerKeys]);
    t.notMatch(kept, /KEY1/, 'no API key is kept');
    t.notOk(kept.includes(header.slice(6)), 'nor the header');
  });

  t.test('headerKey refuses a malformed header every time, and remembers nothing of it', async (t) => {
    const c = new AuthCache(60_000);
    for (const bad of ['Bearer abc', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from(':key').toString('base64')}`]) {
      t.throws(() => c.headerKey('', bad), { code: 'BAD_REQUEST', httpStatus: 401 }, bad);
      t.throws(() => c.headerKey('', bad), { code: 'BAD_REQUEST' }, `${bad}, again`);
    }
  });

  t.test('headerKey remembers at most maxEntries headers, and none with a TTL of 0', async (t) => {
    const c = new AuthCache(60_000, 2);
    const [h1, h2, h3] = ['k1', 'k2', 'k3'].map((k) => basic('a@zulip.test', k)) as [string, string, string];
    for (const h of [h1, h2, h3]) c.headerKey('', h);
    t.ok(c.headerKey('', h1).credentials, 'the oldest was forgotten: decoded again');
    t.notOk(c.headerKey('', h3).credentials, 'the newest is remembered');
    const off = new AuthCache(0);
    off.headerKey('', h1);
    t.ok(off.headerKey('', h1).credentials, 'TTL 0: decoded every time');
  });
});

t.test('clientNameOf follows Zulip: the User-Agent up to the version', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    ['ZulipMobile/27.213 (Android 14)', 'ZulipMobile'],
    ['ZulipPython/0.9.0', 'ZulipPython'],
    ['ZulipTerminal/0.7.0 Python/3.11', 'ZulipTerminal'],
    ['ZulipFlutter/0.0.20 (iOS 17.4)', 'ZulipFlutter'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36', 'Mozilla'],
    ['python-requests/2.31.0', 'python-requests'],
    ['ZulipJS', 'ZulipJS'],
    ['Zulip Electron 5.11.0', 'Zulip Electron'],
    ['curl/8.5.0', 'curl'],
    ['', 'Unspecified'],
    [undefined, 'Unspecified'],
    ['/1.0', 'Unspecified'],
    [`${'x'.repeat(60)}/1.0`, 'x'.repeat(30)],
  ];
  for (const [ua, want] of cases) {
    const request = { headers: ua === undefined ? {} : { 'user-agent': ua } } as unknown as FastifyRequest;
    t.equal(clientNameOf(request), want, `${JSON.stringify(ua)} → ${want}`);
  }
});

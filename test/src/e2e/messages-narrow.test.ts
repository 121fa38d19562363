/**
 * Narrows (spec 2.8, 4.7, 4.9) and history visibility: every operator in both forms with
 * names and ids, negation, keyword search with highlighting, and the privacy cases for every
 * operator — a private stream's outsider, a subscriber who joined a protected-history stream
 * late, a subscriber removed from a private stream (CVE-2024-27286), a guest, and a member
 * reading a public stream's history without being subscribed.
 */
import t, { type Test } from 'tap';
import { startSystem } from '../harness.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

t.test('messages: narrows and visibility', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello, iago, desdemona, polonius } = sys.people;
  await w.createStream('Denmark', [hamlet.user_id, othello.user_id, iago.user_id, polonius.user_id]);
  await w.createStream('Secret', [hamlet.user_id, othello.user_id], { invite_only: true, history_public_to_subscribers: true });
  await w.createStream('Vault', [hamlet.user_id], { invite_only: true, history_public_to_subscribers: false });
  await w.createStream('Verona', [hamlet.user_id]);

  const send = async (who: typeof hamlet, params: Record<string, unknown>) => {
    const r = await sys.client(who).post('/messages', params as never);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    return r.body.id as number;
  };
  const fetch = (who: typeof hamlet, narrow: unknown, extra: Record<string, unknown> = {}) =>
    sys.client(who).get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: narrow as never, ...extra } as never);
  const ids = async (who: typeof hamlet, narrow: unknown, extra: Record<string, unknown> = {}) => {
    const r = await fetch(who, narrow, extra);
    if (r.status !== 200) throw new Error(`${JSON.stringify(narrow)}: ${JSON.stringify(r.body)}`);
    return (r.body.messages as Msg[]).map((m) => m.id as number);
  };

  const d1 = await send(hamlet, { type: 'stream', to: 'Denmark', topic: 'Castle', content: 'the king is dead https://example.com/news' });
  const d2 = await send(othello, { type: 'stream', to: 'Denmark', topic: 'castle', content: 'long live the king @**King Hamlet**' });
  const d3 = await send(hamlet, { type: 'stream', to: 'Denmark', topic: '✔ old business', content: 'done' });
  const s1 = await send(hamlet, { type: 'stream', to: 'Secret', topic: 'plans', content: 'secret zebra plans https://secret.example.com' });
  const v1 = await send(hamlet, { type: 'stream', to: 'Vault', topic: 'gold', content: 'vault gold zebra' });
  await w.subscribe('Vault', [othello.user_id]);
  const v2 = await send(hamlet, { type: 'stream', to: 'Vault', topic: 'gold', content: 'vault silver zebra' });
  const r1 = await send(hamlet, { type: 'stream', to: 'Verona', topic: 'balcony', content: 'romeo zebra' });
  const p1 = await send(hamlet, { type: 'private', to: [othello.user_id], content: 'private zebra' });
  const g1 = await send(hamlet, { type: 'private', to: [othello.user_id, iago.user_id], content: 'group zebra' });
  const p2 = await send(iago, { type: 'private', to: [hamlet.user_id], content: 'from iago' });
  const denmark = w.id('Denmark');

  t.test('stream: by name, by id, both forms, negated', async (t) => {
    t.same(await ids(hamlet, [{ operator: 'stream', operand: 'Denmark' }]), [d1, d2, d3]);
    t.same(await ids(hamlet, [['stream', String(denmark)]]), [d1, d2, d3], 'an id as a string operand');
    t.same(await ids(hamlet, [{ operator: 'stream', operand: denmark }]), [d1, d2, d3], 'an integer operand');
    t.same(await ids(hamlet, [{ operator: 'channel', operand: 'denmark' }]), [d1, d2, d3], 'channel alias, any case');
    const notDenmark = await ids(hamlet, [{ operator: 'stream', operand: 'Denmark', negated: true }]);
    t.notOk(notDenmark.some((id) => [d1, d2, d3].includes(id)));
    t.ok(notDenmark.includes(s1) && notDenmark.includes(p1));
  });

  t.test('topic (case-insensitive), sender, id, near', async (t) => {
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['topic', 'CASTLE']]), [d1, d2]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], { operator: 'subject', operand: 'castle', negated: true }]), [d3]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['sender', othello.email]]), [d2]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], { operator: 'sender', operand: othello.user_id }]), [d2]);
    t.same(await ids(hamlet, [['id', String(d2)]]), [d2]);
    t.same(await ids(hamlet, [{ operator: 'id', operand: d2 }]), [d2]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['near', String(d2)]]), [d1, d2, d3], 'near does not filter');
  });

  t.test('direct message operators', async (t) => {
    t.same(await ids(othello, [['dm', hamlet.email]]), [p1]);
    t.same(await ids(othello, [['pm-with', hamlet.email]]), [p1]);
    t.same(await ids(hamlet, [{ operator: 'dm', operand: [othello.user_id] }]), [p1]);
    t.same(await ids(hamlet, [{ operator: 'dm', operand: [othello.user_id, iago.user_id] }]), [g1]);
    t.same(await ids(hamlet, [['dm', `${iago.email},${othello.email}`]]), [g1], 'comma-separated emails');
    t.same(await ids(hamlet, [['dm', iago.email]]), [p2], 'a 1:1 conversation in both directions');
    t.same(await ids(hamlet, [['dm-including', iago.email]]), [g1, p2]);
    t.same(await ids(hamlet, [['group-pm-with', iago.email]]), [g1]);
    t.same(await ids(hamlet, [['is', 'dm']]), [p1, g1, p2]);
    t.same(await ids(hamlet, [['is', 'private']]), [p1, g1, p2]);
    t.same(await ids(hamlet, [{ operator: 'is', operand: 'dm', negated: true }, ['search', 'zebra']]), [s1, v1, v2, r1]);
  });

  t.test('is: and has: operators', async (t) => {
    t.same(await ids(hamlet, [['is', 'mentioned']]), [d2]);
    t.same(await ids(hamlet, [['is', 'resolved']]), [d3]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], { operator: 'is', operand: 'resolved', negated: true }]), [d1, d2]);
    t.same(await ids(hamlet, [['has', 'link']]), [d1, s1]);
    t.same(await ids(hamlet, [['has', 'image']]), []);
    t.same(await ids(hamlet, [['has', 'attachment']]), []);
    await sys.client(hamlet).post('/messages/flags', { messages: [d3, p2], op: 'add', flag: 'starred' });
    t.same(await ids(hamlet, [['is', 'starred']]), [d3, p2]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['is', 'unread']]), [d1, d2, d3]);
    await sys.client(hamlet).post('/messages/flags', { messages: [d1], op: 'add', flag: 'read' });
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['is', 'unread']]), [d2, d3]);
    t.same(await ids(hamlet, [['stream', 'Denmark'], { operator: 'is', operand: 'unread', negated: true }]), [d1]);
  });

  t.test('search: full-text, stemmed, with highlighting', async (t) => {
    const r = await fetch(hamlet, [['search', 'zebras']]);
    const ms = r.body.messages as Msg[];
    t.same(ms.map((m) => m.id), [s1, v1, v2, r1, p1, g1]);
    t.equal(ms[0]?.match_content, '<p>secret <span class="highlight">zebra</span> plans <a href="https://secret.example.com">https://secret.example.com</a></p>');
    t.equal(ms[0]?.match_subject, 'plans');
    const topicHit = (await fetch(hamlet, [['search', 'castle']])).body.messages as Msg[];
    t.same(topicHit.map((m) => m.id), [d1, d2]);
    t.equal(topicHit[0]?.match_subject, '<span class="highlight">Castle</span>');
    t.same(await ids(hamlet, [['stream', 'Denmark'], ['search', 'king live']]), [d2], 'every word must match');
    t.same(await ids(hamlet, [['stream', 'Denmark'], { operator: 'search', operand: 'king', negated: true }]), [d3]);
  });

  t.test('streams:public', async (t) => {
    const got = await fetch(othello, [['streams', 'public']]);
    const ms = got.body.messages as Msg[];
    t.same(ms.map((m) => m.id), [d1, d2, d3, r1]);
    t.same(ms.find((m) => m.id === r1)?.flags, ['read', 'historical'], 'not received: historical');
    t.same(await ids(othello, [['channels', 'public'], ['search', 'zebra']]), [r1]);
  });

  t.test('narrow errors are 400s, never a wider result', async (t) => {
    const cases: Array<[unknown, string]> = [
      [[['foo', 'bar']], 'Invalid narrow operator: unknown operator foo'],
      [[{ operator: 'in', operand: 'home' }], 'Invalid narrow operator: unknown operator in'],
      [[['is', 'followed']], "Invalid narrow operator: unknown 'is' operand followed"],
      [[['has', 'video']], "Invalid narrow operator: unknown 'has' operand video"],
      [[['streams', 'all']], 'Invalid narrow operator: unknown streams operand all'],
      [[['stream', 'Atlantis']], 'Invalid narrow operator: unknown stream Atlantis'],
      [[['sender', 'ghost@zulip.test']], 'Invalid narrow operator: unknown user ghost@zulip.test'],
      [[['dm', 'ghost@zulip.test']], 'Invalid narrow operator: unknown user in ghost@zulip.test'],
      [[['id', 'abc']], 'Invalid narrow operator: Invalid message ID'],
      [[{ operator: 'topic', operand: [1, 2] }], 'Invalid narrow operator: invalid operand for topic'],
      [[['stream']], 'Invalid narrow'],
      [{ operator: 'stream' }, 'Invalid narrow'],
    ];
    for (const [narrow, msg] of cases) {
      const r = await fetch(hamlet, narrow);
      t.equal(r.status, 400, JSON.stringify(narrow));
      t.match(r.body, { result: 'error', code: 'BAD_REQUEST', msg }, JSON.stringify(narrow));
    }
  });

  t.test('matches_narrow (spec 4.7)', async (t) => {
    const r = await sys.client(hamlet).get('/messages/matches_narrow', { msg_ids: [d1, d2, s1, p1], narrow: [['search', 'zebra']] });
    t.equal(r.status, 200);
    t.same(Object.keys(r.body.messages as object).sort(), [String(s1), String(p1)].sort());
    t.match((r.body.messages as Msg)[String(p1)], { match_content: '<p>private <span class="highlight">zebra</span></p>', match_subject: '' });
    const plain = await sys.client(hamlet).get('/messages/matches_narrow', { msg_ids: [d1, d2, d3], narrow: [['topic', 'castle']] });
    t.same((plain.body.messages as Msg)[String(d1)], { match_content: '<p>the king is dead <a href="https://example.com/news">https://example.com/news</a></p>', match_subject: 'Castle' });
    t.notOk(String(d3) in (plain.body.messages as Msg));
    const missing = await sys.client(hamlet).get('/messages/matches_narrow', { narrow: [] });
    t.match(missing.body, { code: 'REQUEST_VARIABLE_MISSING', msg: "Missing 'msg_ids' argument" });
  });

  // Each privacy case runs every operator against messages the reader must never see.
  const everyNarrow = (extra: number) => [
    [],
    [['stream', 'Secret']],
    [['stream', 'Vault']],
    [['stream', String(w.id('Secret'))]],
    [['search', 'zebra']],
    [['search', 'vault']],
    [['sender', hamlet.email]],
    [['id', String(extra)]],
    [['near', String(extra)]],
    [['topic', 'plans']],
    [['topic', 'gold']],
    [['has', 'link']],
    [['is', 'unread']],
    [['is', 'starred']],
    [['is', 'mentioned']],
    [['streams', 'public']],
    [['dm-including', hamlet.email]],
    [{ operator: 'stream', operand: 'Denmark', negated: true }],
    [{ operator: 'is', operand: 'dm', negated: true }],
  ];
  const assertHidden = async (t: Test, who: typeof hamlet, hidden: number[]) => {
    for (const narrow of everyNarrow(hidden[0] as number)) {
      const got = await ids(who, narrow);
      t.notOk(got.some((id) => hidden.includes(id)), `${JSON.stringify(narrow)} hides them`);
    }
    for (const id of hidden) {
      const one = await sys.client(who).get(`/messages/${id}`);
      t.match(one.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' }, `GET /messages/${id}`);
    }
    const m = await sys.client(who).get('/messages/matches_narrow', { msg_ids: hidden, narrow: [] });
    t.same(m.body.messages, {}, 'matches_narrow');
    const first = await fetch(who, [['stream', 'Secret']], { anchor: 'first_unread', num_before: 10, num_after: 10 });
    t.same(first.body.messages, [], 'first_unread');
  };

  t.test('an administrator outside a private stream sees none of it', async (t) => {
    await assertHidden(t, desdemona, [s1, v1, v2]);
  });

  t.test('a guest reads only streams they are subscribed to', async (t) => {
    await assertHidden(t, polonius, [s1, v1, v2, r1]);
    t.same(await ids(polonius, [['stream', 'Denmark']]), [d1, d2, d3], 'a subscribed public stream in full');
    t.same(await ids(polonius, [['stream', 'Verona']]), [], 'not an unsubscribed public one');
  });

  t.test('protected history: a late subscriber sees only what was sent after joining', async (t) => {
    t.same(await ids(othello, [['stream', 'Vault']]), [v2]);
    // The notification bot's "subscribed you to #**Vault**" direct message matches the search too.
    t.same(await ids(othello, [['search', 'vault'], { operator: 'is', operand: 'dm', negated: true }]), [v2]);
    t.same(await ids(othello, [['id', String(v1)]]), []);
    const one = await sys.client(othello).get(`/messages/${v1}`);
    t.match(one.body, { code: 'BAD_REQUEST', msg: 'Invalid message(s)' });
    const star = await sys.client(othello).post('/messages/flags', { messages: [v1], op: 'add', flag: 'starred' });
    t.match(star.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' }, 'cannot flag it into their history either');
  });

  t.test('a public stream can be read unsubscribed; unreceived messages are historical', async (t) => {
    const got = await fetch(othello, [['stream', 'Verona']]);
    t.same((got.body.messages as Msg[]).map((m) => [m.id, m.flags]), [[r1, ['read', 'historical']]]);
    t.notOk((await ids(othello, [])).includes(r1), 'but it is not in their personal history');
    const star = await sys.client(othello).post('/messages/flags', { messages: [r1], op: 'add', flag: 'starred' });
    t.equal(star.status, 200);
    t.same(await ids(othello, [['is', 'starred']]), [r1], 'starring brings it into their history');
    const again = await fetch(othello, [['stream', 'Verona']]);
    t.same((again.body.messages as Msg[])[0]?.flags, ['read', 'starred', 'historical']);
  });

  t.test('removed from a private stream: access ends in every narrow (CVE-2024-27286)', async (t) => {
    t.same(await ids(othello, [['stream', 'Secret']]), [s1], 'before removal');
    await sys.client(othello).post('/messages/flags', { messages: [s1, v2], op: 'add', flag: 'starred' });
    await w.unsubscribe('Secret', [othello.user_id]);
    await w.unsubscribe('Vault', [othello.user_id]);
    await assertHidden(t, othello, [s1, v2]);
    t.ok((await ids(othello, [])).includes(p1), 'their direct messages stay');
  });

  t.test('a stream made private hides its history from outsiders at once', async (t) => {
    t.same(await ids(desdemona, [['stream', 'Verona']]), [r1]);
    await w.updateStream('Verona', { invite_only: true, history_public_to_subscribers: true });
    t.same(await ids(desdemona, [['stream', 'Verona']]), []);
    t.same(await ids(desdemona, [['search', 'romeo']]), []);
    t.same(await ids(hamlet, [['stream', 'Verona']]), [r1], 'subscribers still read it');
  });
});

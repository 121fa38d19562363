/**
 * Keyword search reads matches in windows of ids moving away from the anchor and stops once
 * it has enough (queries/get-messages.ts). With a window of two ids, a handful of messages
 * spans many windows: the results must be exactly those of one query over all matches.
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { messagesWorld, type Msg } from './messages-fixtures.js';

// Read by the messages service when it starts (deps.ts).
process.env.ZC_SEARCH_WINDOW_IDS = '2';

t.test('messages: keyword search across windows', async (t) => {
  const sys = await startSystem(t);
  const w = messagesWorld(sys, t);
  const { hamlet, othello } = sys.people;
  await w.createStream('Shore', [hamlet.user_id, othello.user_id]);
  const words = ['walrus one', 'plain', 'walrus two', 'plain', 'plain', 'plain', 'plain', 'walrus three', 'plain', 'walrus four', 'walrus five', 'plain'];
  const ids: number[] = [];
  for (const content of words) {
    const r = await sys.client(hamlet).post('/messages', { type: 'stream', to: 'Shore', topic: 'beach', content });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
    ids.push(r.body.id as number);
  }
  const matches = ids.filter((_, i) => words[i]?.startsWith('walrus'));
  const search = async (params: Record<string, unknown>) => {
    const r = await sys.client(othello).get('/messages', { narrow: [['search', 'walrus']], ...params } as never);
    t.equal(r.status, 200);
    return { ids: (r.body.messages as Msg[]).map((m) => m.id as number), body: r.body };
  };

  t.same((await search({ anchor: 'newest', num_before: 3, num_after: 0 })).ids, matches.slice(-3), 'the newest three');
  const all = await search({ anchor: 'newest', num_before: 100, num_after: 0 });
  t.same(all.ids, matches, 'every match, oldest first');
  t.equal(all.body.found_oldest, true);
  const oldest = await search({ anchor: 'oldest', num_before: 0, num_after: 2 });
  t.same(oldest.ids, matches.slice(0, 2), 'the oldest two');
  t.equal(oldest.body.found_newest, false);
  const middle = matches[2] as number;
  t.same((await search({ anchor: middle, num_before: 1, num_after: 1 })).ids, matches.slice(1, 4), 'around a match');
  t.same((await search({ anchor: middle + 1, num_before: 2, num_after: 5 })).ids, matches.slice(1), 'around a non-matching anchor');
  t.match((all.body.messages as Msg[])[0], { match_content: '<p><span class="highlight">walrus</span> one</p>' });
});

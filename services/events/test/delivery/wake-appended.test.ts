/**
 * What a wake carries after an append (wakeAppended): per queue that took every event routed
 * to it, the first id and its events, each distinct text once; nothing for a queue that
 * skipped some (its ids would not follow one another) or beyond the size a wake may carry.
 */
import t from 'tap';
import { wakeAppended } from '../../src/delivery/appender.js';
import type { QueuedEvent } from '../../src/store/queue-store.js';

const ev = (seq: number, json: string): QueuedEvent => ({ seq, origin: '', txid: '', json });

t.test('queues that took all their events, shared events once', async (t) => {
  const shared = ev(1, '{"type":"message","n":1}');
  const own = ev(1, '{"type":"message","n":1,"local_message_id":"7"}');
  const second = ev(2, '{"type":"drafts"}');
  const perQueue = new Map([
    ['a', [shared, second]],
    ['b', [own]],
    ['c', [shared, second]],
    ['partly', [shared, second]],
    ['dead', [shared]],
  ]);
  const appended = new Map([
    ['a', 2],
    ['b', 1],
    ['c', 2],
    ['partly', 1],
    ['dead', -1],
  ]);
  const newest = new Map([
    ['a', 11],
    ['b', 4],
    ['c', 1],
    ['partly', 9],
  ]);
  t.same(wakeAppended(perQueue, appended, newest), {
    json: [shared.json, second.json, own.json],
    queues: { a: [10, 0, 1], b: [4, 2], c: [0, 0, 1] },
  });
});

t.test('none qualifies, or too large: nothing carried', async (t) => {
  t.equal(wakeAppended(new Map([['a', [ev(1, '{}')]]]), new Map([['a', 0]]), new Map()), undefined);
  const big = ev(1, `{"type":"message","content":"${'x'.repeat(70 * 1024)}"}`);
  t.equal(wakeAppended(new Map([['a', [big]]]), new Map([['a', 1]]), new Map([['a', 0]])), undefined);
  const small = ev(2, '{"type":"drafts"}');
  t.same(wakeAppended(new Map([['a', [big]], ['b', [small]]]), new Map([['a', 1], ['b', 1]]), new Map([['a', 0], ['b', 5]])), { json: [small.json], queues: { b: [5, 0] } }, 'the queues that fit go');
});

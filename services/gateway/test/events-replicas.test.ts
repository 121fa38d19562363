/** Which events replicas the gateway sends polls to, and when it gives up on one. */
import t from 'tap';
import { EventsReplicas, REPLICA_SILENT_AFTER_MS } from '../src/lib/events-replicas.js';

t.test('events replicas heard beating', async (t) => {
  let now = 1_000_000;
  const r = new EventsReplicas(() => now);
  t.equal(r.pick(), undefined, 'none heard: the queue group decides');

  r.heard('a');
  r.heard('b');
  const picked = new Set(Array.from({ length: 50 }, () => r.pick()));
  t.same([...picked].sort(), ['a', 'b'], 'polls spread over the replicas heard');
  t.same(new Set(Array.from({ length: 20 }, () => r.pick('a'))), new Set(['b']), 'never the one just given up on');

  now += 2_000;
  r.heard('b');
  now += 1_000;
  t.same(new Set(Array.from({ length: 20 }, () => r.pick())), new Set(['b']), 'a replica silent for three beats gets no new polls');
  t.ok(r.isAlive('a', 0), 'but a poll it holds is still waited for');
  now += REPLICA_SILENT_AFTER_MS;
  t.notOk(r.isAlive('a', 0), 'until it has been silent four beats');
  t.ok(r.isAlive('a', now - 1_000), 'counting from when it took the poll, if later (a replica that just started)');

  r.forget('b');
  t.equal(r.pick(), undefined, 'a forgotten replica is not picked');
});

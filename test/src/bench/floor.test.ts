/**
 * The long-poll floor: a bare server in its own process answers every parked poll once a tick,
 * and the figure is its own CPU per answer over the timed window only.
 */
import t from 'tap';
import { longPollFloor } from './floor.js';

t.test('counts the answers of the timed window, one per client per tick, and the server CPU per answer', async (t) => {
  const body = JSON.stringify({ result: 'success', msg: '', events: [{ type: 'message', id: 7, message: { content: 'x'.repeat(300) } }], queue_id: 'q' });
  const f = await longPollFloor(body, { connections: 4, tickMs: 20, seconds: 1, warmSeconds: 0.3 });
  // 4 clients × 50 ticks a second: a loaded machine loses ticks, none gains any.
  t.ok(f.answers > 40 && f.answers <= 4 * 52, `answers in one second: ${f.answers}`);
  t.ok(f.cpuUsPerAnswer > 0 && Number.isFinite(f.cpuUsPerAnswer), `CPU per answer: ${f.cpuUsPerAnswer.toFixed(1)} µs`);
});

t.test('an answer the clients cannot read is an error, not a figure', async (t) => {
  await t.rejects(longPollFloor('not json', { connections: 2, tickMs: 20, seconds: 0.3, warmSeconds: 0.1 }), SyntaxError);
});

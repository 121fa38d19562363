/** Event ids are spliced into the stored JSON text; the client must parse what parsing and re-serialising gave. */
import t from 'tap';
import { withId } from '../src/event-queues/index.js';

t.test('withId puts the queue id first without changing the event', async (t) => {
  const events = [
    { type: 'heartbeat' },
    { type: 'message', message: { id: 12, content: 'a "quoted" {brace} é 🙂', flags: ['read'] }, flags: [] },
    { type: 'update_message', message_ids: [1, 2], rendered_content: '<p>x</p>' },
    {},
  ];
  for (const [i, e] of events.entries()) {
    const text = withId(40 + i, JSON.stringify(e));
    t.same(JSON.parse(text), { id: 40 + i, ...e }, `event ${i}`);
    t.ok(text.startsWith(`{"id":${40 + i}`), 'the id comes first');
  }
  t.same(JSON.parse(`[${[withId(1, '{"type":"a"}'), withId(2, '{"type":"b"}')].join(',')}]`), [{ id: 1, type: 'a' }, { id: 2, type: 'b' }], 'a reply joins them as one array');
});

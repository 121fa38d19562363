/**
 * GET /events replies on the bus: the events' JSON text is spliced into the reply and taken
 * out again without being parsed, for every shape of queue id and event text.
 */
import t from 'tap';
import { RawJson } from '../src/bus/index.js';
import { eventsReplyText, splitEventsReply } from '../src/contracts/index.js';

t.test('events replies keep their events as text', async (t) => {
  const events = '[{"id":3,"type":"message","message":{"content":"a \\"quoted\\" ,\\"events\\": [] } text"}},{"id":4,"type":"heartbeat"}]';
  for (const queue_id of [undefined, '1732630000:12', 'odd "id",\\"events\\":[', '']) {
    const reply = queue_id === undefined ? { events_json: events } : { events_json: events, queue_id };
    const wire = eventsReplyText(reply);
    t.same(JSON.parse(wire.text), { events: JSON.parse(events), ...(queue_id !== undefined ? { queue_id } : {}) }, `valid JSON of the wire shape (queue_id ${JSON.stringify(queue_id)})`);
    t.same(splitEventsReply(wire), reply, `split back to the same text (queue_id ${JSON.stringify(queue_id)})`);
  }
  t.same(splitEventsReply(eventsReplyText({ events_json: '[]', queue_id: 'q' })), { events_json: '[]', queue_id: 'q' }, 'no events');
  // A text not beginning the way eventsReplyText writes it is parsed: equivalent JSON comes back.
  t.same(splitEventsReply(new RawJson('{ "queue_id" : "q", "events" : [ ] }')), { events_json: '[]', queue_id: 'q' }, 'spaced JSON');
});

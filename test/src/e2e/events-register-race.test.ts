/**
 * /register while the state changes (STYLE B6, Zulip's race-free register): every event
 * committed around the moment the state is read is either in the state or delivered after
 * last_event_id, never both and never neither. Many registrations race against writers that
 * add, edit and delete drafts; each registration's state plus its events must equal the
 * final state exactly (applyEvent is strict: a repeated add or a lost add fails it).
 */
import t from 'tap';
import { startSystem } from '../harness.js';
import { QueuePoller, applyEvent, type Json } from './events-support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('register races writers without losing or repeating an event', async (t) => {
  const sys = await startSystem(t);
  const h = sys.client(sys.people.hamlet);
  let stop = false;
  let writes = 0;
  const writer = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const r = await h.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: `w${w}-${i}` }] });
      const id = (r.body.ids as number[])[0];
      writes++;
      if (i % 3 === 1) await h.patch(`/drafts/${id}`, { draft: { type: '', to: [], topic: '', content: `w${w}-${i} edited` } });
      if (i % 3 === 2) await h.delete(`/drafts/${id}`);
    }
  };
  const writers = [writer(0), writer(1), writer(2)];
  const registrations: Array<{ poller: QueuePoller; state: Json }> = [];
  for (let i = 0; i < 30; i++) {
    registrations.push(await QueuePoller.register(h, { event_types: ['drafts'] }));
    await sleep(15);
  }
  stop = true;
  await Promise.all(writers);
  await sys.flushOutboxes();
  const final = ((await h.get('/drafts')).body.drafts as Json[]).sort((a, b) => (a.id as number) - (b.id as number));
  t.ok(writes > 30, `${writes} drafts written during the registrations`);

  let registrationsThatSkippedEvents = 0;
  for (const [i, { poller, state }] of registrations.entries()) {
    // Everything for this queue has been delivered once two quiet drains in a row come back empty.
    let quiet = 0;
    while (quiet < 2) {
      const got = await poller.drain();
      quiet = got.length === 0 ? quiet + 1 : 0;
      if (got.length === 0) await sleep(100);
    }
    if ((state.last_event_id as number) >= 0) registrationsThatSkippedEvents++;
    const applied = structuredClone(state);
    try {
      for (const e of poller.received) applyEvent(applied, e);
    } catch (e) {
      t.fail(`registration ${i}: ${(e as Error).message}`);
      continue;
    }
    const mine = (applied.drafts as Json[]).sort((a, b) => (a.id as number) - (b.id as number));
    t.same(mine, final, `registration ${i}: state + events = final state`);
  }
  t.comment(`${registrationsThatSkippedEvents} of ${registrations.length} registrations had events their state already held (last_event_id >= 0)`);
});

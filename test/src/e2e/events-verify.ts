/**
 * Zulip's verify_action for our tests: register a queue, run an action, collect what the
 * queue receives, check each event's schema, apply the events to the registered state and
 * compare with a fresh /register.
 */
import type { Test } from 'tap';
import { Value } from '@sinclair/typebox/value';
import { clientEventSchema } from '@zc/shared/contracts/client-events';
import type { ApiClient, Params } from '../client.js';
import type { System } from '../harness.js';
import { QueuePoller, applyEvent, comparable, register, type ClientEvent } from './events-support.js';

/** Waits until the queue has been quiet for a while (events of one action may come from several services). */
async function settle(sys: System, poller: QueuePoller): Promise<ClientEvent[]> {
  const out: ClientEvent[] = [];
  let quiet = 0;
  while (quiet < 3) {
    await sys.flushOutboxes();
    await new Promise((r) => setTimeout(r, 120));
    const got = await poller.drain();
    out.push(...got);
    quiet = got.length === 0 ? quiet + 1 : 0;
  }
  return out;
}

export interface Check {
  /** Register parameters of both the watched queue and the fresh one. */
  params?: Params;
  /** Event types the action must have produced, in order of first appearance. */
  expect: string[];
}

export async function verifyAction(t: Test, sys: System, c: ApiClient, action: () => Promise<unknown>, check: Check): Promise<ClientEvent[]> {
  const { poller, state } = await QueuePoller.register(c, check.params);
  await action();
  const events = await settle(sys, poller);
  const types = [...new Set(events.map((e) => (e.op ? `${e.type}/${e.op}` : e.type)))];
  t.same(types, check.expect, `events: ${types.join(', ')}`);
  for (const e of events) {
    const schema = clientEventSchema(e);
    t.ok(schema && Value.Check(schema, e), `${e.type}/${String(e.op)} has a schema and matches it`, schema ? { errors: [...Value.Errors(schema, e)].slice(0, 3).map((x) => `${x.path}: ${x.message}`) } : {});
  }
  const applied = structuredClone(state);
  for (const e of events) applyEvent(applied, e, { include_subscribers: check.params?.include_subscribers === true, slim_presence: check.params?.slim_presence === true });
  const fresh = await register(c, check.params);
  t.same(comparable(applied), comparable(fresh), 'applied events equal a fresh register');
  await c.delete('/events', { queue_id: poller.queueId });
  await c.delete('/events', { queue_id: fresh.queue_id });
  return events;
}


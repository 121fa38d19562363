import { setMaxListeners } from 'node:events';
import type { FastifyInstance } from 'fastify';
import type { HeldOutcome, RawJson } from '@zc/shared/bus';
import { eventsRpc, splitEventsReply, type GetEventsReply, type GetEventsRequest } from '@zc/shared/contracts';
import { isAppError } from '@zc/shared/errors';
import { success } from '@zc/shared/envelope';
import { bool, int, str } from '@zc/shared/params';
import { EventsReplicas } from '../../../../lib/events-replicas.js';
import { params } from '../../../../plugins/params.js';

/**
 * A replica says at once that it holds a poll (it only has to receive it). One that does not
 * within this is paused or cut off (and NATS may still route to it for many seconds), and the
 * poll goes again, to another replica.
 */
const HOLD_ACK_WITHIN_MS = 1_000;
/** Less than this left of the window: answer `events: []` rather than parking again. */
const MIN_PARK_MS = 1_500;

/**
 * GET /api/v1/events (long-poll) and DELETE /api/v1/events (spec 4.21). A parked poll holds
 * only its HTTP request and one pending bus request here; the events service answers when
 * the queue has events, with a heartbeat, or when a newer poll supplants it. Polls go to an
 * events replica heard beating within the last seconds (the queue group when none is known);
 * the replica holding the poll names itself, and when it falls silent (killed, paused, cut
 * off) the poll is asked again of another, so the client gets its events within seconds
 * instead of after the heartbeat. Nothing is lost or doubled by asking again:
 * only the client's last_event_id acknowledges, and the newer poll supplants the older one.
 */
export default async function eventsRoutes(app: FastifyInstance) {
  const { bus, log } = app.deps;
  // The events replica heartbeats before this deadline (it travels with the request); if no
  // live replica answers by then, this gateway answers `events: []` itself, so the client
  // polls again.
  const pollWindow = app.deps.gateway.pollWindowMs;
  const replicas = new EventsReplicas();
  const stopListening = replicas.listen(bus);
  const holderAlive = (replica: string, since: number) => replicas.isAlive(replica, since);
  // On shutdown parked polls answer `events: []` at once (nothing is lost: events are
  // acknowledged only by the client's next last_event_id), instead of holding the close.
  // One signal for every parked poll: one controller per poll cost as much as its bus request.
  const closing = new AbortController();
  setMaxListeners(0, closing.signal);
  app.addHook('preClose', async () => closing.abort());
  app.addHook('onClose', async () => stopListening());

  app.get('/', async (request, response) => {
    const p = params(request, { queue_id: str(), last_event_id: int({ min: -1 }), dont_block: bool().optional(false) });
    const ask = { actor: request.actor, ...p };
    const noEvents: GetEventsReply = { events_json: '[]', queue_id: p.queue_id };
    const reply = p.dont_block ? splitEventsReply(await bus.requestRaw(eventsRpc.get, ask)) : await parkedPoll(ask, noEvents);
    // The events arrive as JSON text and go out as it (see GetEventsReply); only a request
    // with parameters to report as ignored takes the envelope's object path.
    if (request.ignoredParams) {
      return success({ events: JSON.parse(reply.events_json) as unknown[], ...(reply.queue_id !== undefined ? { queue_id: reply.queue_id } : {}) });
    }
    const queueId = reply.queue_id !== undefined ? `,"queue_id":${JSON.stringify(reply.queue_id)}` : '';
    return response.type('application/json; charset=utf-8').send(`{"result":"success","msg":"","events":${reply.events_json}${queueId}}`);
  });

  /** One parked poll: asked of live replicas in turn until answered or the window passes. */
  async function parkedPoll(ask: GetEventsRequest, noEvents: GetEventsReply): Promise<GetEventsReply> {
    const windowEnd = Date.now() + pollWindow;
    let avoid: string | undefined;
    for (let attempt = 0; ; attempt++) {
      const left = windowEnd - Date.now();
      // The first attempt always goes, however short the window (tests use short heartbeats).
      if (closing.signal.aborted || (attempt > 0 && left < MIN_PARK_MS)) return noEvents;
      const to = replicas.pick(avoid);
      let outcome: HeldOutcome<RawJson>;
      try {
        outcome = await bus.requestHeldRaw(eventsRpc.get, ask, {
          timeoutMs: Math.max(left, 1),
          ackWithinMs: HOLD_ACK_WITHIN_MS,
          holderAlive,
          signal: closing.signal,
          ...(to !== undefined ? { to } : {}),
        });
      } catch (e) {
        // No responder under that name: the replica is gone; the queue group decides next.
        if (to === undefined || !isAppError(e) || e.code !== 'SERVICE_UNAVAILABLE') throw e;
        replicas.forget(to);
        continue;
      }
      if ('reply' in outcome) return splitEventsReply(outcome.reply);
      if (outcome.gaveUp === 'timeout' || outcome.gaveUp === 'aborted') return noEvents;
      avoid = outcome.holder ?? to;
      log.info({ queue_id: ask.queue_id, replica: avoid, why: outcome.gaveUp }, 'events replica holding a poll stopped answering; polling again');
    }
  }

  app.delete('/', async (request) => {
    const p = params(request, { queue_id: str() });
    return success(await bus.request(eventsRpc.deleteQueue, { actor: request.actor, queue_id: p.queue_id }));
  });
}

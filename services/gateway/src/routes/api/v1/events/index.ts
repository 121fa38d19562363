import type { FastifyInstance } from 'fastify';
import { LONGPOLL_MAX_PARK_MS, eventsRpc, type GetEventsReply } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { bool, int, str } from '@zc/shared/params';
import { params } from '../../../../plugins/params.js';

/**
 * How long a parked poll may stay unanswered: the heartbeat interval (ZC_HEARTBEAT_MS when
 * fixed, for tests), plus a second. The events replica heartbeats before this deadline (it
 * travels with the request); if the replica died or hangs, this gateway answers `events: []`
 * itself when it passes, so the client re-polls (reaching a live replica) within the
 * heartbeat interval instead of waiting for a bus timeout.
 */
const pollWindowMs = () => (Number(process.env.ZC_HEARTBEAT_MS) || LONGPOLL_MAX_PARK_MS) + 1_000;

/**
 * GET /api/v1/events (long-poll) and DELETE /api/v1/events (spec 4.21). A parked poll holds
 * only its HTTP request and one pending bus request here; the events service answers when
 * the queue has events, with a heartbeat, or when a newer poll supplants it.
 */
export default async function eventsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;
  const pollWindow = pollWindowMs();
  // On shutdown parked polls answer `events: []` at once (nothing is lost: events are
  // acknowledged only by the client's next last_event_id), instead of holding the close.
  const parked = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of parked) end();
  });

  app.get('/', async (request, response) => {
    const p = params(request, { queue_id: str(), last_event_id: int({ min: -1 }), dont_block: bool().optional(false) });
    const started = Date.now();
    const poll = bus.request(eventsRpc.get, { actor: request.actor, ...p }, { timeoutMs: pollWindow });
    const reply = await new Promise<GetEventsReply>((resolve, reject) => {
      const end = () => resolve({ events_json: '[]', queue_id: p.queue_id });
      parked.add(end);
      poll
        .then(resolve, (e) => {
          // The whole window passed without an answer: the replica holding the poll is gone or
          // stuck. Nothing is lost (only the client's next last_event_id acknowledges), so the
          // client simply polls again. A quick failure (no replica at all) stays a 503.
          if (!p.dont_block && Date.now() - started >= pollWindow) end();
          else reject(e);
        })
        .finally(() => parked.delete(end));
    });
    // The events arrive as JSON text and go out as it (see GetEventsReply); only a request
    // with parameters to report as ignored takes the envelope's object path.
    if (request.ignoredParams) {
      return success({ events: JSON.parse(reply.events_json) as unknown[], ...(reply.queue_id !== undefined ? { queue_id: reply.queue_id } : {}) });
    }
    const queueId = reply.queue_id !== undefined ? `,"queue_id":${JSON.stringify(reply.queue_id)}` : '';
    return response.type('application/json; charset=utf-8').send(`{"result":"success","msg":"","events":${reply.events_json}${queueId}}`);
  });

  app.delete('/', async (request) => {
    const p = params(request, { queue_id: str() });
    return success(await bus.request(eventsRpc.deleteQueue, { actor: request.actor, queue_id: p.queue_id }));
  });
}

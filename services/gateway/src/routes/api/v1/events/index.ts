import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Gauge } from 'prom-client';
import { eventsRpc, isGuest, type Actor } from '@zc/shared/contracts';
import { PollHub, PollStore, UNEXPECTED, type PollReply } from '@zc/shared/event-queues';
import { success } from '@zc/shared/envelope';
import { bool, int, parseParams, str, type ParamValues } from '@zc/shared/params';
import { traceClockMs } from '@zc/shared/telemetry';
import { paramsCheckingCredentials, takeCredentialCheck, type CredentialCheck } from '../../../../plugins/auth.js';
import { DECLINE } from '../../../../lib/fast-lane.js';
import { declaredParams, params } from '../../../../plugins/params.js';

/**
 * GET /api/v1/events (long-poll) and DELETE /api/v1/events (spec 4.21). The gateway serves
 * GET itself, straight from the event queues in Redis (@zc/shared/event-queues), as Zulip's
 * Tornado does with the queues it holds: a poll costs one Redis script, and a parked one
 * holds its HTTP request and a small record here until the events service's wake broadcast,
 * a heartbeat, a newer poll of the queue on any gateway, its client leaving, or this
 * gateway's shutdown ends it. An events replica going away touches no parked poll (only
 * appends, which fail over to another leader); this gateway going away drops its clients'
 * connections, and they poll again elsewhere with the same last_event_id.
 */
/** The success envelope of a poll's answer, its events spliced in as the JSON text they are. */
function pollBody(reply: PollReply): string {
  const queueId = reply.queue_id !== undefined ? `,"queue_id":${JSON.stringify(reply.queue_id)}` : '';
  return `{"result":"success","msg":"","events":${reply.events_json}${queueId}}`;
}

export default async function eventsRoutes(app: FastifyInstance) {
  const { bus, log, redis, config, gateway, metrics } = app.deps;
  const hub = new PollHub({ bus, store: new PollStore(redis, config.redisPrefix), log, heartbeatMs: gateway.heartbeatMs, trace: config.deliveryTrace });
  hub.start();
  // On shutdown parked polls answer `events: []` at once (nothing is lost: events are
  // acknowledged only by the client's next last_event_id), instead of holding the close.
  app.addHook('preClose', async () => hub.stop());
  new Gauge({
    name: 'zc_events_parked_polls',
    help: 'GET /events requests parked on this gateway',
    registers: metrics ? [metrics] : [],
    collect() {
      this.set(hub.parkedCount);
    },
  });

  const pollParams = { queue_id: str(), last_event_id: int({ min: -1 }), dont_block: bool().optional(false) };

  async function answer(request: FastifyRequest, response: FastifyReply, actor: Actor, check: CredentialCheck | null): Promise<unknown> {
    const p = await paramsCheckingCredentials(request, pollParams, check);
    const reply = await hub.getEvents(
      {
        queueId: p.queue_id,
        userId: actor.user_id,
        guest: isGuest(actor),
        lastEventId: p.last_event_id,
        dontBlock: p.dont_block,
        ...(check ? { expect: { keys: check.keys, values: check.tokens } } : {}),
      },
      // 'close' comes once, when the response has been sent or the connection has dropped.
      (leave) => response.raw.once('close', () => !response.raw.writableFinished && leave()),
    );
    if (reply === UNEXPECTED) return answer(request, response, await (check as CredentialCheck).recheck(), null);
    // The gateway's hops (see PollReply.trace), and when the answer went to be written.
    if (reply.trace) void response.header('x-zc-trace', `${reply.trace},${traceClockMs()}`);
    // The events are JSON text from the queue and go out as it; only a request with
    // parameters to report as ignored takes the envelope's object path.
    if (request.ignoredParams) {
      return success({ events: JSON.parse(reply.events_json) as unknown[], ...(reply.queue_id !== undefined ? { queue_id: reply.queue_id } : {}) });
    }
    return response.type('application/json; charset=utf-8').send(pollBody(reply));
  }

  app.get('/', { config: { credentialsCheckedByRoute: true } }, async (request, response) => answer(request, response, request.actor, takeCredentialCheck(request)));

  // The plain poll in the fast lane (lib/fast-lane.ts), where most of the gateway's requests
  // go under load: a refused parameter, or credentials that moved, are Fastify's to answer.
  declaredParams.set(`GET ${app.prefix}`, pollParams);
  app.lane.add('GET', app.prefix, Object.keys(pollParams), async ({ res, params: query, credentials }) => {
    let p: ParamValues<typeof pollParams>;
    try {
      p = parseParams(query, pollParams).values;
    } catch {
      return DECLINE;
    }
    const { actor, keys, tokens } = credentials;
    const reply = await hub.getEvents(
      { queueId: p.queue_id, userId: actor.user_id, guest: isGuest(actor), lastEventId: p.last_event_id, dontBlock: p.dont_block, expect: { keys, values: tokens } },
      (leave) => res.once('close', () => !res.writableFinished && leave()),
    );
    if (reply === UNEXPECTED) return DECLINE;
    return { body: pollBody(reply), ...(reply.trace ? { headers: { 'x-zc-trace': `${reply.trace},${traceClockMs()}` } } : {}) };
  });

  app.delete('/', async (request) => {
    const p = params(request, { queue_id: str() });
    const deleted = await bus.request(eventsRpc.deleteQueue, { actor: request.actor, queue_id: p.queue_id });
    hub.forget(p.queue_id);
    return success(deleted);
  });
}

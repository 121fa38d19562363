import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { EventsNarrowTerm, eventsRpc } from '@zc/shared/contracts';
import { bool, int, json } from '@zc/shared/params';
import { sendRawSuccess } from '../../../../lib/raw-success.js';
import { params } from '../../../../plugins/params.js';

const stringList = () => json(Type.Array(Type.String()));

/** POST /api/v1/register (spec section 6, api-notes §2.1): a new event queue and the initial state. */
export default async function registerRoutes(app: FastifyInstance) {
  app.post('/', async (request, reply) => {
    const p = params(request, {
      event_types: stringList().optional(),
      fetch_event_types: stringList().optional(),
      narrow: json(Type.Array(EventsNarrowTerm)).optional([]),
      all_public_streams: bool().optional(false),
      apply_markdown: bool().optional(false),
      client_gravatar: bool().optional(true),
      include_subscribers: bool().optional(false),
      slim_presence: bool().optional(false),
      client_capabilities: json(Type.Record(Type.String(), Type.Unknown())).optional({}),
      queue_lifespan_secs: int({ min: 0 }).optional(0),
    });
    // The state is relayed as JSON text: a large realm's is megabytes (lib/raw-success.ts).
    const state = await app.deps.bus.requestRaw(
      eventsRpc.register,
      { actor: request.actor, client_name: request.clientName, ...p, event_types: p.event_types ?? null, fetch_event_types: p.fetch_event_types ?? null },
      // The owners get ZC_REGISTER_STATE_TIMEOUT_MS (10 s) each, in parallel.
      { timeoutMs: 15_000 },
    );
    return sendRawSuccess(request, reply, state);
  });
}

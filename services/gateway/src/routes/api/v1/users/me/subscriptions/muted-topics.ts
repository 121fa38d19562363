import type { FastifyInstance } from 'fastify';
import { LIMITS, subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { int, oneOf, str } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

/** PATCH /api/v1/users/me/subscriptions/muted_topics (spec 4.12). */
export default async function mutedTopicsRoutes(app: FastifyInstance) {
  app.patch('/', async (request) => {
    const p = params(request, {
      stream_id: int().optional(),
      stream: str().optional(),
      topic: str({ maxLength: LIMITS.maxTopicLength }),
      op: oneOf(['add', 'remove'] as const),
    });
    const body = {
      actor: request.actor,
      topic: p.topic,
      op: p.op,
      ...(p.stream_id !== undefined ? { stream_id: p.stream_id } : {}),
      ...(p.stream !== undefined ? { stream: p.stream } : {}),
    };
    return success(await app.deps.bus.request(subscriptionsRpc.updateMutedTopic, body));
  });
}

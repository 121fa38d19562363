import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { json } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

const Change = Type.Object({ stream_id: Type.Integer(), property: Type.String(), value: Type.Union([Type.Boolean(), Type.String()]) });

/** POST /api/v1/users/me/subscriptions/properties (spec 4.1); unknown parameters are reported back. */
export default async function subscriptionPropertiesRoutes(app: FastifyInstance) {
  app.post('/', async (request) => {
    const p = params(request, { subscription_data: json(Type.Array(Change)) });
    await app.deps.bus.request(subscriptionsRpc.updateProperties, { actor: request.actor, subscription_data: p.subscription_data });
    // Feature level 111: the reply lists ignored parameters, even when there are none.
    return success({ ignored_parameters_unsupported: request.ignoredParams ?? [] });
  });
}

import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { subscriptionsRpc } from '@zc/shared/contracts';
import { success } from '@zc/shared/envelope';
import { AppError } from '@zc/shared/errors';
import { bool, custom, decodeJsonField, int, json } from '@zc/shared/params';
import { params } from '../../../../../../plugins/params.js';

const invalid = (name: string) => new AppError('BAD_REQUEST', `Invalid ${name}`, 400, { var_name: name });

/** User ids (preferred) or display emails, all of one kind (spec 4.6; ids since feature level 9). */
export const principals = custom((raw, name): number[] | string[] => {
  const v = decodeJsonField(raw, name);
  if (Array.isArray(v) && v.every((x) => Number.isSafeInteger(x))) return v as number[];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw invalid(name);
});

/**
 * An integer, or one of the names `realm_default` / `unlimited`. Clients send the name
 * JSON-encoded (`"unlimited"` in quotes) or bare; the service checks the value.
 */
export const retentionDays = custom((raw, name): number | string => {
  let v: unknown = raw;
  if (typeof raw === 'string') {
    try {
      v = JSON.parse(raw);
    } catch {
      v = raw;
    }
  }
  if (typeof v === 'string' || Number.isSafeInteger(v)) return v as number | string;
  throw invalid(name);
});

const NewStreamEntry = Type.Object({ name: Type.String(), description: Type.Optional(Type.String()), color: Type.Optional(Type.String()) });

/** /api/v1/users/me/subscriptions: list (spec 4.22), subscribe (spec 4.6), unsubscribe. */
export default async function subscriptionsRoutes(app: FastifyInstance) {
  const { bus } = app.deps;

  app.get('/', async (request) => {
    const p = params(request, { include_subscribers: bool().optional(false) });
    return success(await bus.request(subscriptionsRpc.listSubscriptions, { actor: request.actor, ...p }));
  });

  app.post('/', async (request) => {
    const p = params(request, {
      subscriptions: json(Type.Array(NewStreamEntry)),
      principals: principals.optional(),
      authorization_errors_fatal: bool().optional(true),
      announce: bool().optional(false),
      invite_only: bool().optional(false),
      is_web_public: bool().optional(false),
      history_public_to_subscribers: bool().optional(),
      stream_post_policy: int().optional(),
      is_announcement_only: bool().optional(),
      message_retention_days: retentionDays.optional(),
    });
    // Absent optional parameters stay absent on the bus (JSON drops undefined).
    return success(await bus.request(subscriptionsRpc.subscribe, { actor: request.actor, ...p }));
  });

  app.delete('/', async (request) => {
    const p = params(request, { subscriptions: json(Type.Array(Type.String())), principals: principals.optional() });
    const body = { actor: request.actor, subscriptions: p.subscriptions, ...(p.principals ? { principals: p.principals } : {}) };
    return success(await bus.request(subscriptionsRpc.unsubscribe, body));
  });
}

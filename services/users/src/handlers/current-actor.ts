/**
 * The actor a request carries comes from the gateway's credential cache, which trails a role
 * change or a deactivation by one event's trip (docs/CONVENTIONS.md, read-your-writes). The
 * users service owns those facts, so it decides every permission on its own row: an owner
 * demoted and promoted again acts as an owner at once, and a deactivated account acts no more.
 */
import type { Bus, HandlerContext, RawJson } from '@zc/shared/bus';
import type { RpcContract, RequestOf, ReplyOf } from '@zc/shared/bus';
import type { Actor } from '@zc/shared/contracts';
import type { Queryable } from '@zc/shared/db';
import { AppError } from '@zc/shared/errors';
import { userStore } from '../store/user-store.js';

type Serve = Pick<Bus, 'serve'>;

const userDeactivated = () => new AppError('USER_DEACTIVATED', 'Account is deactivated', 401);

function carriedActor(req: unknown): Actor | undefined {
  if (typeof req !== 'object' || req === null || !('actor' in req)) return undefined;
  return (req as { actor: Actor }).actor;
}

/** The actor with the role the users table holds now. */
export async function currentActor(q: Queryable, actor: Actor): Promise<Actor> {
  const row = await userStore.findById(q, actor.realm_id, actor.user_id);
  if (!row || !row.is_active) throw userDeactivated();
  return row.role === actor.role ? actor : { ...actor, role: row.role };
}

/** `bus.serve` whose handlers see each request's actor as `currentActor` gives it. */
export function servingCurrentActors(bus: Bus, q: Queryable): Serve {
  return {
    serve<C extends RpcContract>(c: C, handler: (req: RequestOf<C>, ctx: HandlerContext) => Promise<ReplyOf<C> | RawJson>): void {
      bus.serve(c, async (req, ctx) => {
        const actor = carriedActor(req);
        return handler(actor ? ({ ...(req as object), actor: await currentActor(q, actor) } as RequestOf<C>) : req, ctx);
      });
    },
  };
}

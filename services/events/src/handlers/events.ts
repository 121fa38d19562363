/** Bus adapters of the events service: decode, call one action, reply. */
import type { Bus } from '@zc/shared/bus';
import { eventsReplyText, eventsRpc } from '@zc/shared/contracts';
import { doDeleteQueue } from '../actions/delete-queue.js';
import { doDropUserQueues } from '../actions/drop-user-queues.js';
import { doRegister } from '../actions/register.js';
import type { EventsDeps } from '../deps.js';
import type { PollHub } from '../delivery/poll-hub.js';

export function registerEventHandlers(bus: Bus, deps: EventsDeps, hub: PollHub): void {
  bus.serve(eventsRpc.register, (r) => doRegister(deps, r));
  bus.serve(eventsRpc.get, async (r, ctx) => eventsReplyText(await hub.getEvents(r, ctx.deadline)), { holder: hub.replicaId });
  bus.serve(eventsRpc.deleteQueue, async (r) => {
    await doDeleteQueue(deps, hub, r.actor, r.queue_id);
    return {};
  });
  bus.serve(eventsRpc.dropUserQueues, async (r) => ({ dropped: await doDropUserQueues(deps, hub, r) }));
}

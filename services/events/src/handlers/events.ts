/** Bus adapters of the events service: decode, call one action, reply. */
import type { Bus } from '@zc/shared/bus';
import { eventsRpc } from '@zc/shared/contracts';
import { doDeleteQueue } from '../actions/delete-queue.js';
import { doDropUserQueues } from '../actions/drop-user-queues.js';
import { doRegister } from '../actions/register.js';
import type { EventsDeps } from '../deps.js';
import type { QueueWaker } from '../delivery/wake.js';

export function registerEventHandlers(bus: Bus, deps: EventsDeps, waker: QueueWaker): void {
  bus.serve(eventsRpc.register, (r) => doRegister(deps, r));
  bus.serve(eventsRpc.deleteQueue, async (r) => {
    await doDeleteQueue(deps, waker, r.actor, r.queue_id);
    return {};
  });
  bus.serve(eventsRpc.dropUserQueues, async (r) => ({ dropped: await doDropUserQueues(deps, waker, r) }));
}

/** Bus adapters of the subscriptions service: decode, call one action or query, reply. */
import type { Bus } from '@zc/shared/bus';
import { subscriptionsRpc, registerStateReply } from '@zc/shared/contracts';
import { checkArchiveStream } from '../actions/archive-stream.js';
import { checkAddDefaultStream, checkRemoveDefaultStream } from '../actions/default-streams.js';
import { checkUpdateMutedTopic } from '../actions/muted-topics.js';
import { checkAddSubscriptions } from '../actions/subscribe.js';
import { checkUpdateSubscriptionProperties } from '../actions/subscription-properties.js';
import { checkRemoveSubscriptions } from '../actions/unsubscribe.js';
import { checkUpdateStream } from '../actions/update-stream.js';
import type { SubscriptionsDeps } from '../deps.js';
import { getRegisterState } from '../queries/register-state.js';
import { getStream, getStreamId, listStreams } from '../queries/streams.js';
import { getSubscriptionStatus, listStreamMembers } from '../queries/stream-members.js';
import { getStreamAccess, listSubscriptions } from '../queries/subscriptions.js';

export function registerSubscriptionHandlers(bus: Bus, deps: SubscriptionsDeps): void {
  bus.serve(subscriptionsRpc.subscribe, (r) => checkAddSubscriptions(deps, r));
  bus.serve(subscriptionsRpc.unsubscribe, (r) => checkRemoveSubscriptions(deps, r));
  bus.serve(subscriptionsRpc.listSubscriptions, async (r) => ({ subscriptions: await listSubscriptions(deps, r.actor, r.include_subscribers) }));
  bus.serve(subscriptionsRpc.updateProperties, async (r) => {
    await checkUpdateSubscriptionProperties(deps, r.actor, r.subscription_data);
    return {};
  });
  bus.serve(subscriptionsRpc.updateMutedTopic, async (r) => {
    await checkUpdateMutedTopic(deps, r);
    return {};
  });
  bus.serve(subscriptionsRpc.listStreams, async (r) => ({ streams: await listStreams(deps, r.actor, r) }));
  bus.serve(subscriptionsRpc.getStream, async (r) => ({ stream: await getStream(deps, r.actor, r.stream_id) }));
  bus.serve(subscriptionsRpc.updateStream, (r) => checkUpdateStream(deps, r));
  bus.serve(subscriptionsRpc.archiveStream, (r) => checkArchiveStream(deps, r));
  bus.serve(subscriptionsRpc.addDefaultStream, (r) => checkAddDefaultStream(deps, r));
  bus.serve(subscriptionsRpc.removeDefaultStream, (r) => checkRemoveDefaultStream(deps, r));
  bus.serve(subscriptionsRpc.getStreamId, async (r) => ({ stream_id: await getStreamId(deps, r.actor, r.stream) }));
  bus.serve(subscriptionsRpc.streamMembers, async (r) => ({ subscribers: await listStreamMembers(deps, r.actor, r.stream_id) }));
  bus.serve(subscriptionsRpc.subscriptionStatus, async (r) => ({ is_subscribed: await getSubscriptionStatus(deps, r.actor, r.user_id, r.stream_id) }));
  bus.serve(subscriptionsRpc.streamAccess, (r) => getStreamAccess(deps, r));
  bus.serve(subscriptionsRpc.registerState, async (r) => {
    const { snapshot, state } = await getRegisterState(deps, r.actor, r.fetch, r.options);
    return registerStateReply(snapshot, state);
  });
}

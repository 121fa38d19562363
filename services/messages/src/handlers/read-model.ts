/** Durable consumers feeding the read models, and the stream announcement. */
import type { Bus } from '@zc/shared/bus';
import { subscriptionsEvents, usersEvents, type StreamAnnouncement } from '@zc/shared/contracts';
import { doAnnounceStream } from '../actions/announce-stream.js';
import { applySubscriptionsEvent, applyUsersEvent } from '../actions/read-model.js';
import type { SendWriter } from '../actions/send-writer.js';
import type { MessagesDeps } from '../deps.js';

/** Starts the consumers (the bus stops them when the service stops). */
export async function startReadModelConsumers(bus: Bus, deps: MessagesDeps, writer: SendWriter): Promise<void> {
  const { streamAnnounced, ...readModelEvents } = subscriptionsEvents;
  await bus.consume(Object.values(usersEvents), { durable: 'messages-users-read-model' }, (subject, payload, meta) => applyUsersEvent(deps, subject, payload, meta));
  await bus.consume(Object.values(readModelEvents), { durable: 'messages-subscriptions-read-model' }, (subject, payload, meta) =>
    applySubscriptionsEvent(deps, subject, payload, meta),
  );
  // Its own consumer, so a slow or failing announcement never holds up the read model.
  await bus.consume([streamAnnounced], { durable: 'messages-stream-announcements' }, (_subject, payload) =>
    doAnnounceStream(deps, writer, payload as StreamAnnouncement),
  );
}

/** Durable consumers feeding the read models, and the stream announcement. */
import type { Bus } from '@zc/shared/bus';
import { subscriptionsEvents, usersEvents, type StreamAnnouncement } from '@zc/shared/contracts';
import type { Logger } from '@zc/shared/logging';
import { doAnnounceStream } from '../actions/announce-stream.js';
import { applySubscriptionsEvent, applyUsersEvent } from '../actions/read-model.js';
import type { SendWriter } from '../actions/send-writer.js';
import type { MessagesDeps } from '../deps.js';
import { consumeServiceEvents } from './service-events.js';

/** Starts the consumers; the returned function stops them (service shutdown). */
export async function startReadModelConsumers(bus: Bus, log: Logger, deps: MessagesDeps, writer: SendWriter): Promise<() => Promise<void>> {
  const { streamAnnounced, ...readModelEvents } = subscriptionsEvents;
  const consumers = [
    await consumeServiceEvents(bus, log, Object.values(usersEvents), 'messages-users-read-model', (subject, payload) => applyUsersEvent(deps, subject, payload)),
    await consumeServiceEvents(bus, log, Object.values(readModelEvents), 'messages-subscriptions-read-model', (subject, payload, meta) =>
      applySubscriptionsEvent(deps, subject, payload, meta),
    ),
    // Its own consumer, so a slow or failing announcement never holds up the read model.
    await consumeServiceEvents(bus, log, [streamAnnounced], 'messages-stream-announcements', (_subject, payload) =>
      doAnnounceStream(deps, writer, payload as StreamAnnouncement),
    ),
  ];
  return async () => {
    await Promise.all(consumers.map((c) => c.stop()));
  };
}

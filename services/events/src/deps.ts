import type { Bus } from '@zc/shared/bus';
import type { Logger } from '@zc/shared/logging';
import type { EventsConfig } from './config.js';
import type { Registry } from './delivery/registry.js';
import type { QueueStore } from './store/queue-store.js';

/** Everything the events service's actions need, built once at start. */
export interface EventsDeps {
  bus: Bus;
  log: Logger;
  config: EventsConfig;
  store: QueueStore;
  registry: Registry;
}

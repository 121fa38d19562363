/**
 * The events service: event queues in Redis (no PostgreSQL schema). Any replica registers
 * queues and serves polls; one replica at a time (the leader) appends the inbox's events to
 * the queues. See README.md.
 */
import { Gauge } from 'prom-client';
import type { ServiceDefinition } from '@zc/shared/service';
import { loadEventsConfig } from './config.js';
import type { EventsDeps } from './deps.js';
import { Appender } from './delivery/appender.js';
import { PollHub } from './delivery/poll-hub.js';
import { Registry } from './delivery/registry.js';
import { registerEventHandlers } from './handlers/events.js';
import { QueueStore } from './store/queue-store.js';

export const eventsService: ServiceDefinition = {
  name: 'events',
  usesRedis: true,
  async start(ctx) {
    const config = loadEventsConfig();
    const store = new QueueStore(ctx.redis, ctx.config.redisPrefix);
    const registry = new Registry(store, ctx.bus);
    const deps: EventsDeps = { bus: ctx.bus, log: ctx.log, config, store, registry };
    await registry.ensure();
    const hub = new PollHub(deps);
    hub.start();
    const appender = new Appender(deps, hub);
    appender.start();
    registerEventHandlers(ctx.bus, deps, hub);
    new Gauge({
      name: 'zc_events_parked_polls',
      help: 'GET /events requests parked on this replica',
      registers: [ctx.metrics],
      collect() {
        this.set(hub.parkedCount);
      },
    });
    new Gauge({
      name: 'zc_events_leader',
      help: '1 while this replica appends inbox events to the queues',
      registers: [ctx.metrics],
      collect() {
        this.set(appender.isLeader ? 1 : 0);
      },
    });
    return {
      async stop() {
        // Parked polls answer first (events: []), so clients re-poll another replica at once.
        hub.stop();
        await appender.stop();
      },
    };
  },
};

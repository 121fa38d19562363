/**
 * The events service: event queues in Redis (no PostgreSQL schema). Any replica registers
 * and deletes queues; one replica at a time (the leader) appends the inbox's events to the
 * queues and wakes the polls parked on them, which the gateways hold and serve from Redis
 * (@zc/shared/event-queues). See README.md.
 */
import { Gauge, Histogram } from 'prom-client';
import type { ServiceDefinition } from '@zc/shared/service';
import { loadEventsConfig } from './config.js';
import type { EventsDeps } from './deps.js';
import { Appender } from './delivery/appender.js';
import { Registry } from './delivery/registry.js';
import { QueueWaker } from './delivery/wake.js';
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
    const waker = new QueueWaker(ctx.bus);
    // Send-to-delivery latency (operations.md §2.3): from the event's storage in JetStream,
    // right after the change committed, to its append to the queues, which wakes parked polls.
    const delivery = new Histogram({
      name: 'zc_event_delivery_latency_seconds',
      help: 'From an event stored in JetStream (its change committed) to its append to the event queues, by event type',
      labelNames: ['type'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [ctx.metrics],
    });
    const appender = new Appender(deps, waker, (type, seconds) => delivery.observe({ type }, seconds));
    appender.start();
    registerEventHandlers(ctx.bus, deps, waker);
    // Counted by the leader only, at most every 30 s: a SCAN over the queues' keys.
    let counted = { at: 0, n: 0 };
    new Gauge({
      name: 'zc_event_queues',
      help: 'Live event queues (reported by the events leader; other replicas report nothing)',
      registers: [ctx.metrics],
      async collect() {
        this.reset();
        if (!appender.isLeader) return;
        if (Date.now() - counted.at > 30_000) counted = { at: Date.now(), n: await store.countQueues().catch(() => counted.n) };
        this.set(counted.n);
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
      stop: () => appender.stop(),
    };
  },
};

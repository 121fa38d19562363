/** The subscriptions service: streams, subscriptions, muted topics (schema `subscriptions`). */
import { fileURLToPath } from 'node:url';
import { DIRECTORY_MIGRATIONS, Directory } from '@zc/shared/directory';
import type { ServiceDefinition } from '@zc/shared/service';
import { SCHEMA, loadSubscriptionsSettings, type SubscriptionsDeps } from './deps.js';
import { startConsumers } from './handlers/consumers.js';
import { registerSubscriptionHandlers } from './handlers/subscriptions.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const subscriptionsService: ServiceDefinition = {
  name: 'subscriptions',
  migrationsDir: MIGRATIONS_DIR,
  migrationLibraries: [DIRECTORY_MIGRATIONS],
  usesRedis: false,
  async start(ctx) {
    const directory = new Directory({ schema: SCHEMA, pool: ctx.pool, bus: ctx.bus });
    const deps: SubscriptionsDeps = { pool: ctx.pool, bus: ctx.bus, log: ctx.log, settings: loadSubscriptionsSettings(ctx.config), directory };
    registerSubscriptionHandlers(ctx.bus, deps);
    await startConsumers(ctx.bus, deps);
    return undefined;
  },
};

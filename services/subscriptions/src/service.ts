/** The subscriptions service (schema `subscriptions`). */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const subscriptionsService: ServiceDefinition = {
  name: 'subscriptions',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: false,
  async start() {
    return undefined;
  },
};

/** The events service (schema `events`). */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const eventsService: ServiceDefinition = {
  name: 'events',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: true,
  async start() {
    return undefined;
  },
};

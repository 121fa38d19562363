/** The messages service (schema `messages`). */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const messagesService: ServiceDefinition = {
  name: 'messages',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: false,
  async start() {
    return undefined;
  },
};

/** The drafts service (schema `drafts`). */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const draftsService: ServiceDefinition = {
  name: 'drafts',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: false,
  async start() {
    return undefined;
  },
};

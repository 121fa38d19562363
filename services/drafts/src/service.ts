/** The drafts service (schema `drafts`): a user's message drafts, synchronised through drafts events. */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';
import { makeDeps } from './deps.js';
import { registerDraftHandlers } from './handlers/drafts.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const draftsService: ServiceDefinition = {
  name: 'drafts',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: false,
  async start(ctx) {
    registerDraftHandlers(ctx.bus, makeDeps({ pool: ctx.pool, bus: ctx.bus, log: ctx.log }));
    return undefined;
  },
};

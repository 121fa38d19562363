/** The drafts service (schema `drafts`): a user's message drafts, synchronised through drafts events while the user's enable_drafts_synchronization is on. */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';
import { makeDeps } from './deps.js';
import { startDraftConsumers } from './handlers/consumers.js';
import { registerDraftHandlers } from './handlers/drafts.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const draftsService: ServiceDefinition = {
  name: 'drafts',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: false,
  async start(ctx) {
    const deps = makeDeps({ pool: ctx.pool, bus: ctx.bus, log: ctx.log });
    registerDraftHandlers(ctx.bus, deps);
    await startDraftConsumers(ctx.bus, deps);
    return undefined;
  },
};

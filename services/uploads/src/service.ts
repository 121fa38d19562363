/**
 * The uploads service (schema `uploads`): uploaded files, their attachment records and their
 * lifecycle. NATS carries the decisions; file bytes go over this service's internal HTTP
 * listener (http/internal-server.ts) to and from the storage backend (storage/).
 */
import { fileURLToPath } from 'node:url';
import { DIRECTORY_MIGRATIONS } from '@zc/shared/directory';
import type { ServiceDefinition } from '@zc/shared/service';
import { doSweepUnclaimed } from './actions/attachments.js';
import { makeDeps } from './deps.js';
import { startConsumers } from './handlers/consumers.js';
import { registerUploadHandlers } from './handlers/uploads.js';
import { startInternalServer } from './http/internal-server.js';
import { loadUploadsSettings, type UploadsSettings } from './settings.js';
import { createStorage } from './storage/index.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));
export type { UploadsSettings } from './settings.js';

/** The service definition; `overrides` replace settings read from the environment (tests). */
export function uploadsService(overrides: Partial<UploadsSettings> = {}): ServiceDefinition {
  return {
    name: 'uploads',
    migrationsDir: MIGRATIONS_DIR,
    migrationLibraries: [DIRECTORY_MIGRATIONS],
    usesRedis: false,
    async start(ctx) {
      const settings = { ...loadUploadsSettings(ctx.config), ...overrides };
      const storage = createStorage(settings.storage);
      const deps = makeDeps({ pool: ctx.pool, bus: ctx.bus, log: ctx.log, storage, settings, secretKey: ctx.config.secretKey });
      const server = await startInternalServer(deps, settings.httpPort, settings.httpHost, settings.advertiseUrl);
      deps.internalUrl = server.url;
      registerUploadHandlers(ctx.bus, deps);
      await startConsumers(ctx.bus, deps);
      let sweeping: Promise<unknown> = Promise.resolve();
      const sweeper =
        settings.sweepIntervalSeconds > 0
          ? setInterval(() => {
              sweeping = doSweepUnclaimed(deps).catch((err: unknown) => ctx.log.warn({ err }, 'unclaimed upload sweep failed'));
            }, settings.sweepIntervalSeconds * 1000)
          : undefined;
      sweeper?.unref();
      ctx.log.info({ internal_url: server.url, storage: settings.storage.kind }, 'uploads listening');
      return {
        checks: { storage: () => storage.check().catch(() => false) },
        async stop() {
          if (sweeper) clearInterval(sweeper);
          await sweeping;
          await server.close();
          storage.close();
        },
      };
    },
  };
}

/** Realm export, import and deletion (scripts/manage.mjs) read, write and remove files through these. */
export { archiveFiles, type RealmFiles } from './storage/archive-files.js';
export { loadUploadsSettings } from './settings.js';

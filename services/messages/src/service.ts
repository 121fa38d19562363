/** The messages service: messages, per-user flags and read state (schema `messages`). */
import { fileURLToPath } from 'node:url';
import { DIRECTORY_MIGRATIONS, Directory } from '@zc/shared/directory';
import { messagesEvents } from '@zc/shared/contracts';
import type { ServiceDefinition } from '@zc/shared/service';
import { RenderContextCache } from './actions/render-context.js';
import { SendWriter } from './actions/send-writer.js';
import { loadMessagesConfig, type MessagesDeps } from './deps.js';
import { registerMessageHandlers } from './handlers/messages.js';
import { startReadModelConsumers } from './handlers/read-model.js';
import { readModelStore } from './store/read-model-store.js';
import { TypingExpiry } from './typing/expiry.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const messagesService: ServiceDefinition = {
  name: 'messages',
  migrationsDir: MIGRATIONS_DIR,
  migrationLibraries: [DIRECTORY_MIGRATIONS],
  usesRedis: true,
  // One message.sent per message cost a JetStream message, its delivery to the subscriptions
  // service and an acknowledgement: about 6 % of the system's CPU per delivered event in
  // fanout-paced. Its only use is stream statistics, which a quarter of a second does not age.
  outboxCoalescing: [{ subject: messagesEvents.messageSent.subject, into: messagesEvents.messagesSent.subject, field: 'sent', lingerMs: 250, max: 200 }],
  async start(ctx) {
    const render = new RenderContextCache({ pool: ctx.pool, bus: ctx.bus, log: ctx.log });
    // Directory writes move the realm's read-model version like every other read-model write (migrations/0003).
    const directory = new Directory({ schema: 'messages', pool: ctx.pool, bus: ctx.bus, beforeWrite: (tx, realmIds) => readModelStore.bumpVersions(tx, realmIds) });
    const typingExpiry = new TypingExpiry(ctx.redis, ctx.config.redisPrefix, ctx.bus, ctx.log);
    const deps: MessagesDeps = { pool: ctx.pool, bus: ctx.bus, config: ctx.config, settings: loadMessagesConfig(), log: ctx.log, render, directory, typingExpiry, outbox: ctx.outbox };
    render.listen(ctx.bus);
    const writer = new SendWriter(deps);
    registerMessageHandlers(ctx.bus, deps, writer);
    await startReadModelConsumers(ctx.bus, deps, writer);
    typingExpiry.start();
    return { stop: () => typingExpiry.stop() };
  },
};

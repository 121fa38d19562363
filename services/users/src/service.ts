/** The users service: realms, users, credentials (schema `users`). */
import { fileURLToPath } from 'node:url';
import type { ServiceDefinition } from '@zc/shared/service';
import { makeDeps } from './deps.js';
import { registerUserGroupHandlers } from './handlers/user-groups.js';
import { registerPeopleHandlers } from './handlers/people.js';
import { registerUserHandlers } from './handlers/users.js';
import { servingCurrentActors } from './handlers/current-actor.js';
import { userGroupStore } from './store/user-group-store.js';
import { doAnnounceNewFullMembers, FULL_MEMBER_SWEEP_MS } from './actions/full-members.js';
import { doForgetArchivedStream, doSetNewRealmNotificationsStream } from './actions/realm-streams.js';
import { usersInbox } from '@zc/shared/contracts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../migrations', import.meta.url));

export const usersService: ServiceDefinition = {
  name: 'users',
  migrationsDir: MIGRATIONS_DIR,
  usesRedis: true,
  async start(ctx) {
    const deps = makeDeps({ pool: ctx.pool, config: ctx.config, log: ctx.log, redis: ctx.redis, bus: ctx.bus });
    // Realms older than user groups get their system groups once (new realms get them when created).
    await userGroupStore.ensureSystemGroups(ctx.pool, null);
    const bus = servingCurrentActors(ctx.bus, ctx.pool);
    registerUserHandlers(bus, deps);
    registerUserGroupHandlers(bus, deps);
    registerPeopleHandlers(bus, deps);
    // What the subscriptions service does to streams that realm settings name (actions/realm-streams.ts).
    await ctx.bus.consume([usersInbox.realmNotificationsStream, usersInbox.streamArchived], { durable: 'users-realm-streams' }, (...[subject, payload]) =>
      subject === usersInbox.streamArchived.subject ? doForgetArchivedStream(deps, payload) : doSetNewRealmNotificationsStream(deps, payload),
    );
    // Members passing the waiting period join role:fullmembers (actions/full-members.ts).
    let sweeping: Promise<unknown> = Promise.resolve();
    const sweeper = setInterval(() => {
      sweeping = doAnnounceNewFullMembers(deps).catch((err: unknown) => ctx.log.warn({ err }, 'full member sweep failed'));
    }, FULL_MEMBER_SWEEP_MS);
    sweeper.unref();
    return {
      async stop() {
        clearInterval(sweeper);
        await sweeping;
      },
    };
  },
};

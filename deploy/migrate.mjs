// Applies every service's migrations and exits: the Helm pre-install/pre-upgrade Job and the
// compose `migrate` container run this before any new service version starts. Services still
// run their own migrations at start (under the same per-schema advisory lock), so this only
// moves the work, and its failure, to before the rollout instead of into every pod.
import { loadConfig } from '@zc/shared/config';
import { createPool, runMigrations } from '@zc/shared/db';
import { draftsService } from '@zc/drafts';
import { eventsService } from '@zc/events';
import { gatewayService } from '@zc/gateway';
import { messagesService } from '@zc/messages';
import { subscriptionsService } from '@zc/subscriptions';
import { uploadsService } from '@zc/uploads';
import { usersService } from '@zc/users';

const definitions = [usersService, subscriptionsService, messagesService, draftsService, uploadsService(), eventsService, gatewayService()];
const config = loadConfig();
const pool = createPool(config.databaseUrl, { max: 1, applicationName: 'zc-migrate' });
const log = (fields) => process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), service: 'migrate', ...fields })}\n`);

let failed = false;
try {
  for (const def of definitions) {
    if (!def.migrationsDir) continue;
    const applied = await runMigrations(pool, def.name, def.migrationsDir, def.migrationLibraries);
    log({ level: 'info', schema: def.name, applied, msg: applied.length ? 'migrations applied' : 'schema up to date' });
  }
} catch (err) {
  failed = true;
  log({ level: 'error', msg: 'migration failed', err: String(err?.message ?? err) });
} finally {
  await pool.end();
}
process.exit(failed ? 1 : 0);

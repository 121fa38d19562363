// Management CLI: each command prints one JSON object on stdout (README lists them).
import { parseArgs } from 'node:util';
import { loadConfig, realmUrl } from '@zc/shared/config';
import { createPool, runMigrations } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doCreateRealm, doCreateUser, doGrant, makeDeps, MIGRATIONS_DIR, realmStore } from '@zc/users/manage';
import { ensureDatabase, ensureSecretKey } from './lib.mjs';

const ROLES = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 };

function fail(msg) {
  process.stderr.write(`${msg}\n`);
  process.stdout.write(`${JSON.stringify({ result: 'error', msg })}\n`);
  process.exit(1);
}

const [command, ...rest] = process.argv.slice(2);
const options = {
  name: { type: 'string' },
  subdomain: { type: 'string' },
  'owner-email': { type: 'string' },
  'owner-password': { type: 'string' },
  'owner-name': { type: 'string' },
  realm: { type: 'string' },
  email: { type: 'string' },
  password: { type: 'string' },
  'full-name': { type: 'string' },
  role: { type: 'string' },
  bot: { type: 'boolean' },
  'can-create-users': { type: 'boolean' },
  permission: { type: 'string' },
};

let args;
try {
  ({ values: args } = parseArgs({ args: rest, options, strict: true }));
} catch (e) {
  fail(e.message);
}
const need = (k) => {
  if (args[k] === undefined) fail(`missing --${k}`);
  return args[k];
};

ensureSecretKey();
const config = loadConfig({ logLevel: 'silent' });
await ensureDatabase(config.databaseUrl);
const pool = createPool(config.databaseUrl, { max: 2 });
const deps = makeDeps({ pool, config, log: createLogger({ service: 'manage', level: 'silent' }) });

async function realmBySubdomain(sub) {
  const realm = await realmStore.findBySubdomain(pool, sub);
  if (!realm) fail(`no realm with subdomain '${sub}'`);
  return realm;
}

try {
  await runMigrations(pool, 'users', MIGRATIONS_DIR);
  let out;
  switch (command) {
    case 'create-realm': {
      const r = await doCreateRealm(deps, {
        name: need('name'),
        subdomain: need('subdomain'),
        owner: { email: need('owner-email'), password: need('owner-password'), full_name: need('owner-name') },
      });
      out = { realm_id: r.realm.id, subdomain: r.realm.subdomain, realm_url: realmUrl(config, r.realm.subdomain), user_id: r.owner.id, email: r.owner.delivery_email, api_key: r.apiKey };
      break;
    }
    case 'create-user': {
      const realm = await realmBySubdomain(need('realm'));
      const role = args.role ?? 'member';
      if (!(role in ROLES)) fail(`--role must be one of ${Object.keys(ROLES).join(', ')}`);
      const { user, apiKey } = await doCreateUser(deps, realm, {
        email: need('email'),
        password: need('password'),
        full_name: need('full-name'),
        role: ROLES[role],
        is_bot: args.bot ?? false,
        can_create_users: args['can-create-users'] ?? false,
      });
      out = { user_id: user.id, email: user.delivery_email, api_key: apiKey };
      break;
    }
    case 'grant': {
      const realm = await realmBySubdomain(need('realm'));
      const user = await doGrant(deps, realm, need('email'), need('permission'));
      out = { user_id: user.id };
      break;
    }
    default:
      fail(`unknown command '${command ?? ''}'; use create-realm, create-user or grant`);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
} catch (e) {
  fail(e?.message ?? String(e));
} finally {
  await pool.end();
}

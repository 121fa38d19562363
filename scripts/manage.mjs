// Management CLI: each command prints one JSON object on stdout; `--help` describes them.
//   node scripts/manage.mjs --help | <command> --help | <command> [options]
// It works on the database directly (the outbox carries its events to the bus whenever the
// services run), so it works whether or not the system is up, but not without PostgreSQL.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ensureDatabase, ensureSecretKey } from './lib.mjs';

// The service code loads only once the arguments are known good: help and usage errors are instant.
let users; // @zc/users/manage
let sharedConfig = { ConfigError: class {} }; // @zc/shared/config

const ROLES = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 };

const realmOpt = { realm: { type: 'string', help: "the realm's subdomain ('' for the root domain's realm)", required: true } };
const userOpts = { ...realmOpt, email: { type: 'string', help: "the user's email", required: true } };

/** A command that (de)activates a realm; with Redis reachable, every gateway refuses or accepts the realm's keys before it returns. */
function realmActivation(summary, change) {
  return {
    summary,
    options: realmOpt,
    async run(ctx, a) {
      const realm = await ctx.realm(a.realm);
      return ctx.withRedis(async (deps, credentialsRevoked) => ({ realm_id: realm.id, changed: await change(deps, realm.id), credentials_revoked: credentialsRevoked }));
    },
  };
}

/** Every command: its options, what it does, and how (`check`, optional, refuses bad arguments with a UsageError). */
const COMMANDS = {
  'create-realm': {
    summary: 'Create a realm and its owner; prints the owner\'s API key',
    options: {
      name: { type: 'string', help: 'organization name', required: true },
      subdomain: { type: 'string', help: "subdomain ('' serves the root domain)", required: true },
      'owner-email': { type: 'string', help: "owner's email", required: true },
      'owner-password': { type: 'string', help: "owner's password", required: true },
      'owner-name': { type: 'string', help: "owner's full name", required: true },
    },
    async run(ctx, a) {
      const r = await users.doCreateRealm(ctx.deps, { name: a.name, subdomain: a.subdomain, owner: { email: a['owner-email'], password: a['owner-password'], full_name: a['owner-name'] } });
      return { realm_id: r.realm.id, subdomain: r.realm.subdomain, realm_url: sharedConfig.realmUrl(ctx.config, r.realm.subdomain), user_id: r.owner.id, email: r.owner.delivery_email, api_key: r.apiKey };
    },
  },
  'create-user': {
    summary: 'Create a user (or a bot); prints the API key',
    options: {
      ...userOpts,
      password: { type: 'string', help: 'password', required: true },
      'full-name': { type: 'string', help: 'full name', required: true },
      role: { type: 'string', help: `one of ${Object.keys(ROLES).join(', ')} (default member)` },
      bot: { type: 'boolean', help: 'create a generic bot' },
      'can-create-users': { type: 'boolean', help: 'may create users through the API' },
    },
    async run(ctx, a) {
      const realm = await ctx.realm(a.realm);
      const { user, apiKey } = await users.doCreateUser(ctx.deps, realm, {
        email: a.email, password: a.password, full_name: a['full-name'], role: role(a.role ?? 'member'), is_bot: a.bot ?? false, can_create_users: a['can-create-users'] ?? false,
      });
      return { user_id: user.id, email: user.delivery_email, api_key: apiKey };
    },
  },
  grant: {
    summary: 'Grant a server permission (e.g. can_create_users)',
    options: { ...userOpts, permission: { type: 'string', help: 'the permission', required: true } },
    async run(ctx, a) {
      const user = await users.doGrant(ctx.deps, await ctx.realm(a.realm), a.email, a.permission);
      return { user_id: user.id };
    },
  },
  'list-realms': {
    summary: 'List realms with their active user counts',
    options: {},
    async run(ctx) {
      return { realms: await users.listRealms(ctx.pool) };
    },
  },
  'list-users': {
    summary: "List a realm's users and bots",
    options: realmOpt,
    async run(ctx, a) {
      return { users: await users.listUsers(ctx.pool, (await ctx.realm(a.realm)).id) };
    },
  },
  'deactivate-user': {
    summary: 'Deactivate a user: sessions and API key stop working at once',
    options: userOpts,
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      const changed = await users.doDeactivateUser(ctx.deps, realm.id, user.id);
      return { user_id: user.id, changed };
    },
  },
  'reactivate-user': {
    summary: 'Reactivate a deactivated user',
    options: userOpts,
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      await users.checkReactivateUser(ctx.deps, await users.ownerActor(ctx.pool, realm), user.id);
      return { user_id: user.id };
    },
  },
  'change-role': {
    summary: "Change a user's role (the realm's last owner keeps the owner role)",
    options: { ...userOpts, role: { type: 'string', help: Object.keys(ROLES).join(', '), required: true } },
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      await users.checkUpdateUser(ctx.deps, await users.ownerActor(ctx.pool, realm), user.id, { role: role(a.role) });
      return { user_id: user.id, role: a.role };
    },
  },
  'change-password': {
    summary: "Set a user's password",
    options: { ...userOpts, password: { type: 'string', help: 'the new password (6 characters at least)', required: true } },
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      await users.doSetPassword(ctx.deps, realm.id, user.id, a.password);
      return { user_id: user.id };
    },
  },
  'change-email': {
    summary: "Change a user's email address (they log in with the new one; realm users are told)",
    options: { ...userOpts, 'new-email': { type: 'string', help: 'the new address', required: true } },
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      const { changed } = await users.doChangeEmail(ctx.deps, realm.id, user.id, a['new-email']);
      return { user_id: user.id, email: a['new-email'].trim(), changed };
    },
  },
  'deactivate-realm': realmActivation(
    "Deactivate a realm (Zulip's deactivate_realm): every user's API key is refused, clients are told and their event queues dropped",
    (deps, realmId) => users.doDeactivateRealm(deps, realmId),
  ),
  'reactivate-realm': realmActivation("Reactivate a deactivated realm (Zulip's reactivate_realm)", (deps, realmId) => users.doReactivateRealm(deps, realmId)),
  'export-realm': {
    summary: 'Write a realm (every service\'s rows and its uploaded files) to one JSON file: backups and moves',
    options: { ...realmOpt, output: { type: 'string', help: 'the file to write (mode 0600: it holds password hashes and encrypted API keys)', required: true } },
    async run(ctx, a) {
      const files = await ctx.files();
      try {
        const archive = await ctx.admin.exportRealm(ctx.pool, a.realm, files);
        await writeFile(a.output, JSON.stringify(archive), { mode: 0o600 });
        const rows = Object.values(archive.tables).reduce((n, t) => n + t.length, 0);
        return { realm_id: archive.realm.id, output: a.output, rows, files: Object.keys(archive.files).length };
      } finally {
        files.close();
      }
    },
  },
  'import-realm': {
    summary: 'Load a realm written by export-realm into this server (its subdomain and row ids must be free)',
    options: { input: { type: 'string', help: 'the file export-realm wrote', required: true } },
    async run(ctx, a) {
      let archive;
      try {
        archive = JSON.parse(await readFile(a.input, 'utf8'));
      } catch (e) {
        throw new UsageError(`cannot read ${a.input}: ${e.message}`);
      }
      // Every schema must exist before rows go in: the same migrations the services run.
      await ctx.migrateAll();
      const files = await ctx.files();
      try {
        return await ctx.admin.importRealm(ctx.pool, archive, files);
      } finally {
        files.close();
      }
    },
  },
  'delete-realm': {
    summary: "Delete a deactivated realm for good (Zulip's delete_realm): every service's rows, its uploaded files, thumbnails and emoji, its Redis state",
    options: {
      ...realmOpt,
      confirm: { type: 'string', help: 'the subdomain again: nothing is deleted unless it matches --realm', required: true },
    },
    check(a) {
      if (a.confirm !== a.realm) throw new UsageError(`--confirm '${a.confirm}' does not repeat --realm '${a.realm}'; nothing deleted`);
    },
    async run(ctx, a) {
      const files = await ctx.files();
      try {
        // Without Redis the realm's presence keys stay (its event queues expire by themselves): said as redis_keys null.
        return await ctx.withRedis((deps, reachable) =>
          ctx.admin.deleteRealm(ctx.pool, a.realm, {
            removeFiles: (realmId) => files.removeRealm(realmId),
            ...(reachable ? { dropRedisState: (realmId, userIds) => ctx.admin.dropRealmRedisState(deps.redis, ctx.config.redisPrefix, realmId, userIds) } : {}),
          }),
        );
      } finally {
        files.close();
      }
    },
  },
  'rotate-api-key': {
    summary: "Give a user a new API key (the old one stops working); prints it",
    options: userOpts,
    async run(ctx, a) {
      const { realm, user } = await ctx.user(a);
      return { user_id: user.id, api_key: await users.doRegenerateApiKey(ctx.deps, realm.id, user.id) };
    },
  },
};

/** Bad arguments: exit status 2. */
class UsageError extends Error {}
/** Something the operator named does not exist: exit status 1. */
class NotFound extends Error {}

function role(name) {
  if (!Object.hasOwn(ROLES, name)) throw new UsageError(`--role must be one of ${Object.keys(ROLES).join(', ')}`);
  return ROLES[name];
}

function help(name) {
  if (!name) {
    const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
    return [
      'Usage: node scripts/manage.mjs <command> [options]   (npm run manage -- <command> …)',
      '',
      'Works on the database named by ZC_DATABASE_URL (docs/configuration.md); prints one JSON object.',
      '',
      'Commands:',
      ...Object.entries(COMMANDS).map(([c, d]) => `  ${c.padEnd(width)}  ${d.summary}`),
      '',
      'node scripts/manage.mjs <command> --help describes a command\'s options.',
    ].join('\n');
  }
  const cmd = COMMANDS[name];
  const opts = Object.entries(cmd.options);
  const width = Math.max(10, ...opts.map(([o, d]) => o.length + (d.type === 'string' ? 6 : 0)));
  return [
    `Usage: node scripts/manage.mjs ${name}${opts.filter(([, d]) => d.required).map(([o]) => ` --${o} …`).join('')}`,
    '',
    cmd.summary + '.',
    ...(opts.length ? ['', 'Options:'] : []),
    ...opts.map(([o, d]) => `  --${(o + (d.type === 'string' ? ' VALUE' : '')).padEnd(width)}  ${d.help}${d.required ? ' (required)' : ''}`),
  ].join('\n');
}

function fail(msg, code = 1) {
  process.stderr.write(`manage: ${msg}\n`);
  process.stdout.write(`${JSON.stringify({ result: 'error', msg })}\n`);
  process.exit(code);
}

/** Errors an operator can act on, in one line; anything else is a bug and keeps its stack. */
function explain(e) {
  const code = e?.code ?? e?.errors?.[0]?.code;
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', '57P03', '3D000', '28P01', '28000'].includes(code)) {
    return `cannot reach the database (${code}${e?.message ? `: ${e.message.split('\n')[0]}` : ''}); is PostgreSQL up, and is ZC_DATABASE_URL right?`;
  }
  if (e instanceof sharedConfig.ConfigError || e?.name === 'ArchiveError' || e?.name === 'RealmDeletionError' || e instanceof UsageError || e instanceof NotFound || typeof e?.httpStatus === 'number') return e.message;
  return undefined;
}

const [command, ...rest] = process.argv.slice(2);
if (!command || command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(`${help()}\n`);
  process.exit(command ? 0 : 2);
}
const cmd = COMMANDS[command];
if (!cmd) fail(`unknown command '${command}'; node scripts/manage.mjs --help lists them`, 2);
if (rest.includes('--help') || rest.includes('-h')) {
  process.stdout.write(`${help(command)}\n`);
  process.exit(0);
}

let args;
try {
  const options = Object.fromEntries(Object.entries(cmd.options).map(([o, d]) => [o, { type: d.type }]));
  ({ values: args } = parseArgs({ args: rest, options, strict: true, allowPositionals: false }));
  const missing = Object.entries(cmd.options).filter(([o, d]) => d.required && args[o] === undefined).map(([o]) => `--${o}`);
  if (missing.length) throw new UsageError(`missing ${missing.join(', ')} (node scripts/manage.mjs ${command} --help)`);
  cmd.check?.(args); // argument rules beyond presence, still before any connection
} catch (e) {
  fail(e.message, 2);
}

let pool;
try {
  sharedConfig = await import('@zc/shared/config');
  users = await import('@zc/users/manage');
  const { createPool, runMigrations } = await import('@zc/shared/db');
  const { createLogger } = await import('@zc/shared/logging');
  ensureSecretKey();
  const config = sharedConfig.loadConfig({ logLevel: 'silent' });
  await ensureDatabase(config.databaseUrl);
  pool = createPool(config.databaseUrl, { max: 2, connectTimeoutMs: 5_000 });
  await runMigrations(pool, 'users', users.MIGRATIONS_DIR);
  const deps = users.makeDeps({ pool, config, log: createLogger({ service: 'manage', level: 'silent' }) });
  const realm = async (sub) => {
    const r = await users.realmStore.findBySubdomain(pool, sub);
    if (!r) throw new NotFound(`no realm with subdomain '${sub}'`);
    return r;
  };
  const ctx = {
    config,
    deps,
    pool,
    realm,
    admin: await import('@zc/shared/admin'),
    /** The uploads storage the environment names (ZC_UPLOADS_BACKEND …), as whole files and whole realms. */
    async files() {
      const uploads = await import('@zc/uploads');
      return uploads.archiveFiles(uploads.loadUploadsSettings(config).storage);
    },
    async migrateAll() {
      const defs = await Promise.all(['users', 'subscriptions', 'messages', 'drafts'].map(async (n) => Object.values(await import(`@zc/${n}`)).find((v) => v?.name === n && v.migrationsDir)));
      const uploads = await import('@zc/uploads');
      for (const d of [...defs, uploads.uploadsService()]) if (d?.migrationsDir) await runMigrations(pool, d.name, d.migrationsDir, d.migrationLibraries);
    },
    /**
     * Runs `fn` with deps that reach Redis (ZC_REDIS_URL), so a revocation holds on every gateway
     * replica when the command returns (the credential tokens). Without Redis the change still
     * happens, and the gateways drop the realm's cached keys when they hear of it (the outbox
     * carries it whenever the services run): `fn` is told which it was.
     */
    async withRedis(fn) {
      const { Redis } = await import('@zc/shared/redis');
      const redis = new Redis(config.redisUrl, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 1, retryStrategy: () => null, enableOfflineQueue: false });
      redis.on('error', () => undefined);
      const reachable = await redis.connect().then(() => true, () => false);
      try {
        return await fn(reachable ? users.makeDeps({ pool, config, redis, log: deps.log }) : deps, reachable);
      } finally {
        redis.disconnect();
      }
    },
    async user(a) {
      const r = await realm(a.realm);
      const u = await users.userStore.findByDeliveryEmail(pool, r.id, a.email);
      if (!u) throw new NotFound(`no user ${a.email} in realm '${a.realm}'`);
      return { realm: r, user: u };
    },
  };
  const out = await cmd.run(ctx, args);
  process.stdout.write(`${JSON.stringify(out)}\n`);
} catch (e) {
  const msg = explain(e);
  if (msg === undefined) {
    process.stderr.write(`${e?.stack ?? e}\n`);
    fail(`internal error: ${e?.message ?? e}`);
  }
  fail(msg, e instanceof UsageError ? 2 : 1);
} finally {
  await pool?.end().catch(() => undefined);
}

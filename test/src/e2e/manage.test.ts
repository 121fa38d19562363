/**
 * The management CLI as an operator runs it (a child process against a test database): help
 * for every command, usage errors with exit status 2, one readable line when PostgreSQL is
 * unreachable, and the account commands end to end.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import pg from 'pg';
import { testEnv } from '@zc/shared/testing';
import { manage as run } from './manage-support.js';

t.setTimeout(300_000); // a dozen CLI processes on a busy machine

const COMMANDS = ['create-realm', 'create-user', 'grant', 'list-realms', 'list-users', 'deactivate-user', 'reactivate-user', 'change-role', 'change-password', 'change-email', 'deactivate-realm', 'reactivate-realm', 'export-realm', 'import-realm', 'delete-realm', 'rotate-api-key'];

/** The CLI with a secret key and whatever else the test gives. */
const manage = (args: string[], env: Record<string, string> = {}) => run(args, { ZC_SECRET_KEY: 'cd'.repeat(32), ...env });

t.test('--help', async (t) => {
  const top = await manage(['--help']);
  t.equal(top.code, 0);
  for (const c of COMMANDS) t.match(top.stdout, new RegExp(`^  ${c} `, 'm'), `lists ${c}`);
  for (const c of COMMANDS) {
    const r = await manage([c, '--help']);
    t.equal(r.code, 0, `${c} --help`);
    t.match(r.stdout, new RegExp(`^Usage: node scripts/manage\\.mjs ${c}`));
  }
  const none = await manage([]);
  t.equal(none.code, 2, 'no command: usage, status 2');
  t.match(none.stdout, /^Usage:/);
});

t.test('usage errors: status 2, one line, no database needed', async (t) => {
  const unknown = await manage(['frobnicate']);
  t.match(unknown, { code: 2, json: { result: 'error', msg: /unknown command 'frobnicate'/ } });
  const missing = await manage(['create-user', '--realm', 'x']);
  t.match(missing, { code: 2, json: { msg: /missing --email, --password, --full-name/ } });
  const bogus = await manage(['list-realms', '--bogus']);
  t.match(bogus, { code: 2, json: { msg: /Unknown option '--bogus'/ } });
  const unconfirmed = await manage(['delete-realm', '--realm', 'x']);
  t.match(unconfirmed, { code: 2, json: { msg: /missing --confirm/ } });
  // Refused before any connection: the database named here does not exist.
  const mistyped = await manage(['delete-realm', '--realm', 'elsinore', '--confirm', 'elsinor'], { ZC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/zc' });
  t.match(mistyped, { code: 2, json: { msg: "--confirm 'elsinor' does not repeat --realm 'elsinore'; nothing deleted" } });
});

t.test('with PostgreSQL unreachable: one line saying so, no stack trace', async (t) => {
  const r = await manage(['list-realms'], { ZC_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/zc' });
  t.equal(r.code, 1);
  t.match(r.json.msg, /^cannot reach the database \(ECONNREFUSED.*is PostgreSQL up, and is ZC_DATABASE_URL right\?$/);
  t.equal(r.stderr.trim().split('\n').length, 1, `one line on stderr: ${r.stderr}`);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack');
  const bad = await manage(['list-realms'], { ZC_DB_POOL_SIZE: 'lots' });
  t.match(bad, { code: 1, json: { msg: /ZC_DB_POOL_SIZE must be a whole number/ } }, 'a bad setting is named');
});

t.test('account commands end to end', async (t) => {
  const env = await testEnv(t);
  const db = { ZC_DATABASE_URL: env.databaseUrl };
  const run = (...args: string[]) => manage(args, db);
  const sql = new pg.Client({ connectionString: env.databaseUrl });
  await sql.connect();
  t.teardown(() => sql.end());
  const row = async (id: unknown) => (await sql.query('SELECT role, is_active, password_hash, api_key_hash FROM users.user_profile WHERE id = $1', [id])).rows[0] as Record<string, unknown>;

  const realm = await run('create-realm', '--name', 'Ops', '--subdomain', 'ops', '--owner-email', 'owner@ops.test', '--owner-password', 'owner-pw-1', '--owner-name', 'Owner');
  t.match(realm, { code: 0, json: { subdomain: 'ops', email: 'owner@ops.test', api_key: /^[A-Za-z0-9]{32}$/ } });
  const user = await run('create-user', '--realm', 'ops', '--email', 'ann@ops.test', '--password', 'ann-pw-12', '--full-name', 'Ann');
  t.equal(user.code, 0, user.stderr);
  const annId = user.json.user_id;

  t.match((await run('list-realms')).json, { realms: [{ subdomain: 'ops', name: 'Ops', active_users: 2, deactivated: false }] });
  const listed = (await run('list-users', '--realm', 'ops')).json.users as Array<Record<string, unknown>>;
  t.match(listed.find((u) => u.email === 'ann@ops.test'), { full_name: 'Ann', role: 'member', is_active: true });
  t.match(listed.find((u) => u.email === 'owner@ops.test'), { role: 'owner' });

  t.match(await run('change-role', '--realm', 'ops', '--email', 'ann@ops.test', '--role', 'administrator'), { code: 0 });
  t.equal((await row(annId)).role, 200);
  t.match(await run('change-role', '--realm', 'ops', '--email', 'ann@ops.test', '--role', 'king'), { code: 2, json: { msg: /--role must be one of/ } });
  const lastOwner = await run('change-role', '--realm', 'ops', '--email', 'owner@ops.test', '--role', 'member');
  t.match(lastOwner, { code: 1, json: { msg: /only organization owner/ } }, 'the last owner keeps the role');

  const before = await row(annId);
  t.match(await run('change-password', '--realm', 'ops', '--email', 'ann@ops.test', '--password', 'new-secret-9'), { code: 0 });
  t.not((await row(annId)).password_hash, before.password_hash, 'password changed');
  t.match(await run('change-password', '--realm', 'ops', '--email', 'ann@ops.test', '--password', 'abc'), { code: 1, json: { msg: /too short/ } });

  const rotated = await run('rotate-api-key', '--realm', 'ops', '--email', 'ann@ops.test');
  t.match(rotated, { code: 0, json: { api_key: /^[A-Za-z0-9]{32}$/ } });
  t.not((await row(annId)).api_key_hash?.toString(), before.api_key_hash?.toString(), 'new key stored');

  t.match(await run('deactivate-user', '--realm', 'ops', '--email', 'ann@ops.test'), { code: 0, json: { changed: true } });
  t.equal((await row(annId)).is_active, false);
  t.match(await run('deactivate-user', '--realm', 'ops', '--email', 'ann@ops.test'), { code: 0, json: { changed: false } }, 'twice: nothing to do');
  t.match(await run('reactivate-user', '--realm', 'ops', '--email', 'ann@ops.test'), { code: 0 });
  t.equal((await row(annId)).is_active, true);
  t.match(await run('reactivate-user', '--realm', 'ops', '--email', 'ann@ops.test'), { code: 1, json: { msg: /already active/ } });

  const changed = await run('change-email', '--realm', 'ops', '--email', 'ann@ops.test', '--new-email', ' Ann.New@ops.test ');
  t.match(changed, { code: 0, json: { user_id: annId, email: 'Ann.New@ops.test', changed: true } }, changed.stderr);
  t.equal((await sql.query('SELECT delivery_email FROM users.user_profile WHERE id = $1', [annId])).rows[0]?.delivery_email, 'Ann.New@ops.test');
  const outbox = (await sql.query<{ subject: string; payload: Record<string, unknown> }>('SELECT subject, payload FROM users.outbox ORDER BY id')).rows;
  t.ok(outbox.some((r) => r.subject === 'users.evt.v1.user.updated' && r.payload.user_id === annId && r.payload.delivery_email === 'Ann.New@ops.test'), 'read models hear of the new address');
  const told = outbox.find((r) => r.subject === 'events.inbox.v1.notify' && JSON.stringify(r.payload.event).includes('"delivery_email":"Ann.New@ops.test"'));
  t.match(told?.payload, { event: { type: 'realm_user', op: 'update', person: { user_id: annId, delivery_email: 'Ann.New@ops.test' } } }, 'clients get realm_user update');
  t.ok((told?.payload.users as number[]).includes(Number(annId)), 'the user is told');
  t.match(await run('change-email', '--realm', 'ops', '--email', 'ann.new@OPS.test', '--new-email', 'Ann.New@ops.test'), { code: 0, json: { changed: false } }, 'the same address: nothing to do');
  t.match(await run('change-email', '--realm', 'ops', '--email', 'ann.new@ops.test', '--new-email', 'OWNER@ops.test'), { code: 1, json: { msg: /already in use/ } }, "another user's address (any case)");
  t.match(await run('change-email', '--realm', 'ops', '--email', 'ann.new@ops.test', '--new-email', 'not an address'), { code: 1, json: { msg: /Invalid email/ } });

  // export-realm writes one JSON document (round trip through a fresh database: realm-export.test.ts).
  const file = path.join(os.tmpdir(), `zc-manage-export-${process.pid}.json`);
  t.teardown(() => rmSync(file, { force: true }));
  const exported = await run('export-realm', '--realm', 'ops', '--output', file);
  t.match(exported, { code: 0, json: { output: file, files: 0 } }, exported.stderr);
  t.ok(Number(exported.json.rows) > 5, `${exported.json.rows} rows`);
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by the operator only');
  t.match(JSON.parse(readFileSync(file, 'utf8')), { format: 'zc-realm-export', version: 1, realm: { subdomain: 'ops' } });
  t.match(await run('import-realm', '--input', file), { code: 1, json: { msg: /realm 'ops' \(or its id \d+\) already exists here/ } }, 'importing over the live realm is refused');
  t.match(await run('import-realm', '--input', `${file}.missing`), { code: 2, json: { msg: /cannot read/ } });

  t.match(await run('deactivate-user', '--realm', 'ops', '--email', 'nobody@ops.test'), { code: 1, json: { msg: /no user nobody@ops.test/ } });
  t.match(await run('list-users', '--realm', 'nope'), { code: 1, json: { msg: /no realm with subdomain 'nope'/ } });
});

// Helpers shared by the start script and the management CLI: the secret key, the database.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECRETS_FILE = path.join(ROOT, '.zc-secrets.json');

/**
 * ZC_SECRET_KEY from the environment, or a key generated on first use and kept in a
 * git-ignored file, so API keys stay decryptable across restarts of a development machine.
 */
export function ensureSecretKey() {
  if (process.env.ZC_SECRET_KEY) return process.env.ZC_SECRET_KEY;
  let secrets = {};
  if (existsSync(SECRETS_FILE)) secrets = JSON.parse(readFileSync(SECRETS_FILE, 'utf8'));
  if (!secrets.secret_key) {
    secrets.secret_key = randomBytes(32).toString('hex');
    writeFileSync(SECRETS_FILE, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  process.env.ZC_SECRET_KEY = secrets.secret_key;
  return secrets.secret_key;
}

/** Creates the database named in ZC_DATABASE_URL if it does not exist yet. */
export async function ensureDatabase(databaseUrl) {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsupported database name ${name}`);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE ${name}`);
  } catch (e) {
    // Two starts racing: the other one created it.
    if (e.code !== '42P04') throw e;
  } finally {
    await client.end();
  }
}

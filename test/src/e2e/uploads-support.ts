/**
 * Helpers for the uploads tests: multipart bodies built by hand (so a test can cut one short
 * or send two files), raw requests to the gateway, and polling for eventually-true facts.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { loadConfig } from '@zc/shared/config';
import { createPool } from '@zc/shared/db';
import { createLogger } from '@zc/shared/logging';
import { doCreateRealm, makeDeps } from '@zc/users/manage';
import type { Account, System } from '../harness.js';

export interface FilePart {
  field?: string;
  filename: string;
  contentType?: string;
  data: Buffer;
}

/** A multipart/form-data body with these files (and plain fields). */
export function multipart(files: FilePart[], fields: Record<string, string> = {}): { body: Buffer; contentType: string } {
  const boundary = `----zc${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  for (const f of files) {
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'file'}"; filename="${f.filename}"\r\n` +
          `Content-Type: ${f.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function basicAuth(a: Account): string {
  return `Basic ${Buffer.from(`${a.email}:${a.api_key}`).toString('base64')}`;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON read freely by assertions
  json: any;
}

/** One request to the gateway with full control of headers and body. */
export async function raw(sys: System, method: string, path: string, o: { as?: Account; body?: Buffer; headers?: Record<string, string>; host?: string } = {}): Promise<RawResponse> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.as) headers.authorization = basicAuth(o.as);
  if (o.host) headers.host = o.host;
  const res = await request(`${sys.baseUrl}${path}`, { method: method as 'GET', headers, body: o.body, maxRedirections: 0 } as Parameters<typeof request>[1]);
  const body = Buffer.from(await res.body.arrayBuffer());
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body, json };
}

/** POST /api/v1/user_uploads with these files. */
export function upload(sys: System, as: Account, files: FilePart[], o: { host?: string } = {}): Promise<RawResponse> {
  const { body, contentType } = multipart(files);
  return raw(sys, 'POST', '/api/v1/user_uploads', { as, body, headers: { 'content-type': contentType }, ...o });
}

/** Polls `probe` until it is true or `ms` pass. */
export async function until(probe: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

/**
 * A second realm (subdomain `norway`, served at Host `norway.localhost`) and its owner, known
 * to the gateway by the time this returns: for "nobody from another realm" checks.
 */
export async function otherRealmOwner(sys: System, t: { teardown(fn: () => unknown): void }): Promise<{ realmId: number; owner: Account; host: string }> {
  const pool = createPool(sys.env.databaseUrl, { max: 1 });
  t.teardown(() => pool.end());
  const deps = makeDeps({ pool, config: loadConfig(sys.env.config), log: createLogger({ service: 'test', level: 'silent' }) });
  const other = await doCreateRealm(deps, { name: 'Norway', subdomain: 'norway', owner: { email: 'fortinbras@norway.test', password: 'x'.repeat(12), full_name: 'Fortinbras' } });
  const owner = { user_id: other.owner.id, email: 'fortinbras@norway.test', api_key: other.apiKey, full_name: 'Fortinbras', password: '' };
  const host = 'norway.localhost';
  await sys.flushOutboxes();
  await until(async () => (await raw(sys, 'GET', '/api/v1/users/me', { as: owner, host })).status === 200);
  return { realmId: other.realm.id, owner, host };
}

/** Every stored file under `dir` (temporary files of writes in progress included), sorted. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

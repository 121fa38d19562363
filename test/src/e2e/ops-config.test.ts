/**
 * Configuration as an operator meets it: a bad value stops a real service process at once
 * with one fatal JSON log line naming the variable; the generated table in
 * docs/configuration.md is up to date; every variable the code reads is in the schema.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { ENV_SCHEMA } from '@zc/shared/config';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs a service's compiled entry point until it exits (or 20 s pass). */
function runService(service: string, env: Record<string, string>): Promise<{ code: number | null; lines: string[] }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, `services/${service}/dist/main.js`)], {
      env: { PATH: process.env.PATH ?? '', ZC_NATS_URL: 'nats://127.0.0.1:1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, lines: out.split('\n').filter(Boolean) });
    });
  });
}

for (const [service, variable, value] of [
  ['gateway', 'ZC_RATE_LIMIT_PER_MINUTE', 'abc'],
  ['gateway', 'ZC_AUTH_CACHE_TTL_MS', '30s'],
  ['users', 'ZC_DB_POOL_SIZE', '0'],
] as const) {
  t.test(`${service} with ${variable}=${value} stops at once, naming it`, async (t) => {
    const { code, lines } = await runService(service, { [variable]: value });
    t.equal(code, 1, 'exit status 1');
    
    t.equal(lines.length, 1, `one line: ${lines.join('\n')}`);
    const line = JSON.parse(lines[0] ?? '{}') as { level: number; msg: string; service: string; problems: Array<{ variable: string }> };
    t.match(line, { level: 60, service, msg: new RegExp(`${variable} must be`) });
    t.same(line.problems.map((p) => p.variable), [variable]);
  });
}

t.test('docs/configuration.md is generated from the schema and up to date', async (t) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/config-doc.mjs'), '--check'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr || 'up to date (node scripts/config-doc.mjs rewrites it)');
  const doc = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
  for (const name of Object.keys(ENV_SCHEMA.properties)) t.match(doc, `| \`${name}\` |`, `${name} in the table`);
});

t.test('every variable the services read is in the schema', async (t) => {
  const known = new Set(Object.keys(ENV_SCHEMA.properties));
  // Read by libraries or the test harness, not settings of ours.
  const elsewhere = new Set(['AWS_REGION', 'ZC_SERVICE', 'ZC_TEST_INFRA', 'ZC_TEST_ADMIN_DATABASE_URL']);
  const sources = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (['node_modules', 'dist', 'test', 'testing'].includes(e.name) ? [] : sources(path.join(dir, e.name))) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
    );
  const files = [...sources('shared/src').filter((f) => !f.endsWith('config/schema.ts')), ...sources('markdown/src'), ...readdirSync(path.join(ROOT, 'services')).flatMap((s) => sources(`services/${s}/src`))];
  const read = new Set<string>();
  for (const f of files) {
    const text = readFileSync(path.join(ROOT, f), 'utf8');
    for (const m of text.matchAll(/\b((?:ZC|OTEL)_[A-Z0-9_]*[A-Z0-9]|LOG_LEVEL)\b/g)) read.add(m[1] as string);
  }
  t.ok(read.size > 10, `${read.size} variables found in the code`);
  for (const v of read) if (!elsewhere.has(v)) t.ok(known.has(v), `${v} is in the schema`);
});

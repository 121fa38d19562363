/**
 * Every dependency a workspace package declares is used by that package (its sources for
 * dependencies, its sources, tests or scripts for devDependencies): an unused one only adds
 * install time, image weight and audit noise.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? (['node_modules', 'dist'].includes(e.name) ? [] : files(path.join(dir, e.name))) : /\.(ts|mts|mjs|js)$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const PACKAGES = ['shared', 'markdown', 'test', ...readdirSync(path.join(ROOT, 'services')).map((s) => `services/${s}`)];
// Used without an import: tap runs the tests, pino-pretty is loaded by name as a pino transport.
const USED_BY_NAME = new Set(['tap', 'pino-pretty']);

for (const pkg of PACKAGES) {
  t.test(pkg, async (t) => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, pkg, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    const text = (dirs: string[]) => dirs.flatMap((d) => files(path.join(ROOT, pkg, d))).map((f) => readFileSync(f, 'utf8')).join('\n');
    const src = text(['src']);
    const all = `${src}\n${text(['test', 'scripts'])}`;
    // import … from 'x', import('x'), require('x') / createRequire(…)('x'), or a computed `x/…` path.
    const imported = (code: string, name: string) => new RegExp(`(from |\\()\\s*['"]${escape(name)}(/[^'"]*)?['"]|\`${escape(name)}/`).test(code);
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (name.startsWith('@zc/') || USED_BY_NAME.has(name) || name.startsWith('@types/')) continue;
      t.ok(imported(src, name), `dependency ${name} is imported by ${pkg}/src`);
    }
    for (const name of Object.keys(manifest.devDependencies ?? {})) {
      if (USED_BY_NAME.has(name) || name.startsWith('@types/')) continue;
      t.ok(imported(all, name), `devDependency ${name} is used by ${pkg}`);
    }
  });
}

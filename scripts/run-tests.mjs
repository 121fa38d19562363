// `npm test`: every package's tests with tap, then one summary line `N passed, N failed`
// (the line CI reads). Files run in parallel; each has its own database and prefixes.
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './lib.mjs';

const ROOTS = ['shared/test', 'markdown/test', ...readdirSync(path.join(ROOT, 'services')).map((s) => `services/${s}/test`), 'test/src'];

function findTests(dir) {
  const abs = path.join(ROOT, dir);
  let entries;
  try {
    entries = readdirSync(abs);
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(ROOT, rel)).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : findTests(rel);
    return name.endsWith('.test.ts') ? [rel] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length ? only : ROOTS.flatMap(findTests);
if (files.length === 0) {
  console.log('0 passed, 0 failed');
  process.exit(1);
}

const jobs = process.env.ZC_TEST_JOBS ?? '2';
const child = spawn(
  process.execPath,
  [path.join(ROOT, 'node_modules/tap/dist/esm/run.mjs'), '--reporter=tap', `--jobs=${jobs}`, '--disable-coverage', '--allow-empty-coverage', ...files],
  {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      // ts-node would otherwise take the root solution tsconfig (no module setting: CommonJS).
      TS_NODE_PROJECT: path.join(ROOT, 'tsconfig.tap.json'),
    },
  },
);
let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4000);
});
child.on('exit', (code) => {
  // tap's closing comment: `# { total: 120, pass: 118, fail: 2, ... }`
  const summary = [...tail.matchAll(/^# \{ total: (\d+)(.*)\}$/gm)].pop();
  const field = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(summary?.[2] ?? '')?.[1] ?? 0);
  const passed = field('pass');
  const failed = field('fail') + (summary ? 0 : 1);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code === 0 && failed === 0 ? 0 : 1);
});
